import type { UIMessage } from "ai";
import { z } from "zod";
import { LruMap } from "@/lib/lru-map";
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
  /** Present when the row was read with a key of its content (lib/db/queries/messages). */
  contentKey?: string;
};

/**
 * Parsed metadata by content key: a turn reads the same rows as the one before it, and
 * parsing a reply's stats is most of what turning a row into a message costs. Frozen, as
 * every reader shares them.
 */
const metadataByContent = new LruMap<string, MessageMetadata | undefined>(10_000);

function parsedMetadata(row: StoredMessage): MessageMetadata | undefined {
  const key = row.contentKey;
  if (key !== undefined && metadataByContent.has(key)) return metadataByContent.get(key);
  const parsed = messageMetadataSchema.safeParse(row.metadata ?? {});
  const metadata = deepFreeze(parsed.success ? parsed.data : fieldByField(row.metadata));
  if (key !== undefined) metadataByContent.set(key, metadata);
  return metadata;
}

/**
 * What can be read of metadata that does not parse as a whole: each field on its own. One bad
 * field (a stat out of range) must not take the others with it — a lost `pinned` would let the
 * next compaction fold a message the user pinned.
 */
function fieldByField(raw: unknown): MessageMetadata | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const fields = messageMetadataSchema.shape;
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!Object.hasOwn(fields, name)) continue;
    const field = fields[name as keyof typeof fields].safeParse(value);
    if (field.success && field.data !== undefined) kept[name] = field.data;
  }
  return kept as MessageMetadata;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export function rowToUIMessage(row: StoredMessage): FoldUIMessage {
  return markStored(
    {
      id: row.id,
      role: row.role,
      parts: row.parts as FoldUIMessage["parts"],
      metadata: parsedMetadata(row),
    },
    row.contentKey,
  );
}

export function messageText(message: Pick<FoldUIMessage, "parts">): string {
  return message.parts
    .map((part) => (part.type === "text" ? part.text : ""))
    .join("")
    .trim();
}

/**
 * A tool call's state once it has a result (or was refused one): what a stopped reply keeps
 * (lib/turn/persist.ts) and what the timeline shows as done (components/chat).
 */
export function isFinishedToolState(state: string | undefined): boolean {
  return state === "output-available" || state === "output-error" || state === "output-denied";
}
