import { z } from "zod";
import { UUID_PATTERN } from "@/lib/db/queries/chats";
import { storable } from "@/lib/message/unstorable-text";

export const TITLE_MAX_CHARS = 200;
export const DEFAULT_CHAT_TITLE = "New chat";

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

export const createChatBody = z.strictObject({
  title: title.optional(),
  modelId: modelIdSchema.optional(),
});

export const updateChatBody = z
  .strictObject({ title: title.optional(), modelId: modelIdSchema.optional() })
  .refine((body) => body.title !== undefined || body.modelId !== undefined, {
    message: "nothing to update: send title or modelId",
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

/** `?before=<chatId>&limit=`: the page of chats listed after `before`. */
export const chatPageQuery = z.strictObject({
  before: z.string().regex(UUID_PATTERN, "before must be a chat id").optional(),
  limit,
});
