import { z } from "zod";
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
