import type { UIMessage } from "ai";
import { z } from "zod";
import { MESSAGE_MAX_CHARS } from "./limits";
import { type MessageMetadata, messageMetadataSchema } from "./stats";
import { markStored } from "./stored";
import { storable } from "./unstorable-text";

/** Fold's UIMessage: what the browser renders and what the database stores are one shape. */
export type FoldUIMessage = UIMessage<MessageMetadata>;

export { MESSAGE_MAX_CHARS };

/** The tool part that shows a compaction in the timeline; stripped before the model sees it. */
export const COMPACTION_TRACE_TOOL_NAME = "compact_context";

const MESSAGE_ID_MAX_CHARS = 100;

/** A message the browser may send: the user's own text, nothing the server owns. */
export const incomingUserMessageSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(MESSAGE_ID_MAX_CHARS)
    .regex(/^[\w-]+$/, "message id has invalid characters"),
  role: z.literal("user", { error: "only user messages can be sent" }),
  parts: z
    .array(
      z.object({
        type: z.literal("text", { error: "only text parts can be sent" }),
        text: storable(z.string(), "the message"),
      }),
    )
    .min(1, "the message has no parts")
    .max(20, "too many parts")
    .refine((parts) => parts.some((p) => p.text.trim().length > 0), "the message is empty")
    .refine(
      (parts) => parts.reduce((n, p) => n + p.text.length, 0) <= MESSAGE_MAX_CHARS,
      `the message is longer than ${MESSAGE_MAX_CHARS.toLocaleString("en-US")} characters`,
    ),
});

/** A stored message row (lib/db/schema `Message`), as far as the browser's shape needs it. */
export type StoredMessage = {
  id: string;
  role: FoldUIMessage["role"];
  parts: unknown;
  metadata: unknown;
};

export function rowToUIMessage(row: StoredMessage): FoldUIMessage {
  const metadata = messageMetadataSchema.safeParse(row.metadata ?? {});
  return markStored({
    id: row.id,
    role: row.role,
    parts: row.parts as FoldUIMessage["parts"],
    metadata: metadata.success ? metadata.data : undefined,
  });
}

export function messageText(message: Pick<FoldUIMessage, "parts">): string {
  return message.parts
    .map((part) => (part.type === "text" ? part.text : ""))
    .join("")
    .trim();
}
