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
