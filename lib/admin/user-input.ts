/**
 * What an admin may send about users and quotas: plain zod with no server imports, so the
 * Admin → Users page checks its fields by the same rules as the routes.
 */
import { z } from "zod";

/** Far above a day of any model, low enough that a stray digit is caught; fits Postgres integer. */
export const MAX_DAILY_TOKENS = 2_000_000_000;
export const MAX_DAILY_MESSAGES = 1_000_000;

const dailyLimit = (max: number) =>
  z
    .number({ error: "must be a whole number, or null for no limit" })
    .int({ error: "must be a whole number" })
    .min(0, { error: "must be 0 or more" })
    .max(max, { error: `must be at most ${max.toLocaleString("en-US")}` });

export const dailyTokenLimit = dailyLimit(MAX_DAILY_TOKENS);
export const dailyMessageLimit = dailyLimit(MAX_DAILY_MESSAGES);

/**
 * PATCH /api/admin/users/:id. `status: "active"` approves a waiting account (or re-enables a
 * disabled one); a limit of null takes the default again. `from`, with `status`, is the status
 * the admin saw: the change is made only while the account still has it (409 otherwise), so an
 * Approve on a stale page cannot re-enable an account another admin disabled meanwhile.
 */
export const userPatchInput = z
  .strictObject({
    status: z.enum(["active", "disabled"]).optional(),
    from: z.enum(["pending", "active", "disabled"]).optional(),
    role: z.enum(["admin", "user"]).optional(),
    dailyTokenLimit: dailyTokenLimit.nullable().optional(),
    dailyMessageLimit: dailyMessageLimit.nullable().optional(),
  })
  .refine((patch) => Object.values(patch).some((value) => value !== undefined), {
    error: "nothing to change: send status, role, dailyTokenLimit or dailyMessageLimit",
  })
  .refine((patch) => patch.from === undefined || patch.status !== undefined, {
    error: "from is the status a change of status starts from: send status with it",
  });

export type UserPatchInput = z.infer<typeof userPatchInput>;

/** PUT /api/admin/quotas: every user's limits unless overridden; null means no limit. */
export const quotaDefaultsInput = z.strictObject({
  dailyTokenLimit: dailyTokenLimit.nullable(),
  dailyMessageLimit: dailyMessageLimit.nullable(),
});

export type QuotaDefaultsInput = z.infer<typeof quotaDefaultsInput>;

/**
 * PATCH /api/admin/quotas: only the limits sent change, so two admins editing different limits
 * at once keep each other's.
 */
export const quotaDefaultsPatchInput = quotaDefaultsInput
  .partial()
  .refine((patch) => Object.values(patch).some((value) => value !== undefined), {
    error: "nothing to change: send dailyTokenLimit or dailyMessageLimit",
  });

export type QuotaDefaultsPatchInput = z.infer<typeof quotaDefaultsPatchInput>;

/** Accounts per page of Admin → Users unless asked otherwise, and at most. */
export const USERS_PAGE_DEFAULT = 100;
export const USERS_PAGE_MAX = 200;
/** The longest text the admin's account search takes (an address is at most 254). */
export const USER_SEARCH_MAX_CHARS = 254;

/** Where a page of the admin's list starts: just after this account (see listUsers). */
export type UserCursor = { rank: number; createdMicros: string; id: string };

/** A creation time in µs as Postgres's bigint holds it. */
const BIGINT_MAX = BigInt("9223372036854775807");
const micros = z
  .string()
  .regex(/^-?\d{1,19}$/)
  .refine((text) => BigInt(text) <= BIGINT_MAX && BigInt(text) >= -BIGINT_MAX - BigInt(1));

const cursorFields = z.tuple([
  z.union([z.literal(0), z.literal(1)]),
  micros,
  z.string().min(1).max(200),
]);

/** The cursor as the list answers it: opaque to the page, which sends it back as `after`. */
export function encodeUserCursor(cursor: UserCursor): string {
  const bytes = new TextEncoder().encode(
    JSON.stringify([cursor.rank, cursor.createdMicros, cursor.id]),
  );
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

function decodeUserCursor(text: string): UserCursor | null {
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const json = new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(binary, (c) => c.charCodeAt(0)),
    );
    const parsed = cursorFields.safeParse(JSON.parse(json));
    if (!parsed.success) return null;
    const [rank, createdMicros, id] = parsed.data;
    return { rank, createdMicros, id };
  } catch {
    return null;
  }
}

/** GET /api/admin/users: `q` searches names and addresses, `after` is the `next` of a page. */
export const userListQuery = z.strictObject({
  q: z
    .string()
    .max(USER_SEARCH_MAX_CHARS, `q: at most ${USER_SEARCH_MAX_CHARS} characters`)
    .transform((q) => q.trim() || undefined)
    .optional(),
  after: z
    .string()
    .max(600, "after: not a cursor this list gave")
    .transform((text, ctx) => {
      const cursor = decodeUserCursor(text);
      if (!cursor) {
        ctx.addIssue({ code: "custom", message: "after: not a cursor this list gave" });
        return z.NEVER;
      }
      return cursor;
    })
    .optional(),
  limit: z.coerce
    .number({ error: "limit must be a whole number" })
    .int("limit must be a whole number")
    .min(1, "limit must be at least 1")
    .max(USERS_PAGE_MAX, `limit must be at most ${USERS_PAGE_MAX}`)
    .default(USERS_PAGE_DEFAULT),
});
export type UserListQuery = z.output<typeof userListQuery>;
