import { z } from "zod";
import { UUID_PATTERN } from "@/lib/db/queries/chats";
import { storable } from "@/lib/message/unstorable-text";

export const TITLE_MAX_CHARS = 200;
/** Longest summary a user may save: far above any summary budget (≤ 4,000 tokens), far below the body limit. */
export const SUMMARY_MAX_CHARS = 60_000;
export const DEFAULT_CHAT_TITLE = "New chat";

/**
 * An edit of what the model remembers names the summary as the user began from it, beside its
 * version: a version moved on by a change that left the summary as it was (a turn setting or
 * clearing the chat's compaction flag) is no conflict. Optional: without it, any move is one.
 */
export const summaryFrom = z
  .string({ error: "from must be a string" })
  .max(2 * SUMMARY_MAX_CHARS, "from is longer than any summary")
  .optional();

const title = storable(
  z
    .string({ error: "title must be a string" })
    .trim()
    .min(1, "title must not be empty")
    .max(TITLE_MAX_CHARS, `title must be at most ${TITLE_MAX_CHARS} characters`),
  "title",
);

/** `provider:model`, e.g. `openai:gpt-4o` or `demo:demo`: the one check every route uses. */
export const modelIdSchema = storable(
  z
    .string({ error: "modelId must be a string" })
    .regex(/^[a-z0-9][a-z0-9-]*:.{1,200}$/, "modelId must look like provider:model"),
  "modelId",
);

/**
 * The id a page gives each request it sends for a turn (a send, a Retry, a Regenerate), and
 * names again in its Stop: a stop then reaches only that attempt (lib/live/stop.ts).
 */
export const attemptIdSchema = z
  .string({ error: "attemptId must be a string" })
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "attemptId must be 1 to 64 letters, digits, - or _");

export const createChatBody = z.strictObject({
  title: title.optional(),
  modelId: modelIdSchema.optional(),
  /**
   * The sidebar's New chat: when the user's newest chat was never used (no message, rename or
   * model picked since it was made), it is the answer (200), not another empty chat.
   */
  reuseUnused: z.boolean().optional(),
});

export const updateChatBody = z
  .strictObject({
    title: title.optional(),
    modelId: modelIdSchema.optional(),
    /**
     * When the user picked `modelId` (ms since the epoch, by the server's clock as the browser
     * tells it: components/server-clock.ts): a pick saved after a later one (it hung on the
     * way) is refused rather than taking the chat back.
     */
    pickedAt: z
      .int({ error: "pickedAt must be a whole number of milliseconds" })
      .min(0, "pickedAt must not be negative")
      .max(253_402_300_799_999, "pickedAt must be before the year 10000")
      .optional(),
  })
  .refine((body) => body.title !== undefined || body.modelId !== undefined, {
    message: "nothing to update: send title or modelId",
  })
  .refine((body) => body.pickedAt === undefined || body.modelId !== undefined, {
    message: "pickedAt goes with modelId",
  });

/** Pages of messages and chats: large enough for a screenful and more, small enough to stay fast. */
export const PAGE_DEFAULT_LIMIT = 50;
export const PAGE_MAX_LIMIT = 200;

const limit = z
  .string()
  .regex(/^\d{1,4}$/, "limit must be a whole number")
  .transform(Number)
  .pipe(
    z
      .number()
      .min(1, "limit must be at least 1")
      .max(PAGE_MAX_LIMIT, `limit must be at most ${PAGE_MAX_LIMIT}`),
  )
  .default(PAGE_DEFAULT_LIMIT);

/** `?before=<messageId>&limit=`: the page of messages older than `before`. */
export const messagePageQuery = z.strictObject({
  before: z.string().min(1, "before must not be empty").max(200, "before is too long").optional(),
  limit,
});

/**
 * A chat's place in the list as the list gave it: UTC ISO 8601 to the microsecond Postgres keeps
 * (years from 1, which Postgres takes; more digits than it keeps would only be rounded).
 */
const listedAt = (name: string) =>
  z.iso
    .datetime({ error: `${name} must be a UTC ISO 8601 timestamp` })
    .regex(/^(?!0000)\d{4}-[^.]*(\.\d{1,6})?Z$/, `${name} must be a UTC ISO 8601 timestamp`);

/**
 * `?before=<chatId>&updatedAt=&createdAt=&limit=`: the page of chats listed after the chat
 * `before`, at the `updatedAt` and `createdAt` the list showed for it, so the page holds even when
 * that chat was since deleted or moved up by a reply. `before` alone looks the chat up instead.
 */
export const chatPageQuery = z
  .strictObject({
    before: z.string().regex(UUID_PATTERN, "before must be a chat id").optional(),
    updatedAt: listedAt("updatedAt").optional(),
    createdAt: listedAt("createdAt").optional(),
    limit,
  })
  .refine((query) => (query.updatedAt === undefined) === (query.createdAt === undefined), {
    error: "updatedAt and createdAt go together",
  })
  .refine((query) => query.before !== undefined || query.updatedAt === undefined, {
    error: "updatedAt and createdAt need before",
  });
