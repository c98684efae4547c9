import { z } from "zod";
import { attemptIdSchema, modelIdSchema } from "@/lib/chat/schemas";
import { MESSAGE_MAX_CHARS } from "@/lib/message/limits";
import { incomingUserMessageSchema, type StoredMessage } from "@/lib/message/ui-message";

/**
 * An edit's or a regenerate's: the chat's last message when the page was told how many messages
 * it moves (GET /api/chats/:id/branches). The chat gone on since, it is refused (409) rather
 * than moving more than the page asked about.
 */
const throughIdSchema = z.string().min(1).max(100).optional();

/**
 * POST /api/chat. The browser sends only the new message (or what to
 * regenerate); the server owns the history.
 */
export const turnRequestSchema = z.discriminatedUnion("trigger", [
  z.strictObject({
    trigger: z.literal("submit-message"),
    chatId: z.string().min(1).max(100),
    modelId: modelIdSchema.optional(),
    /** The page's id for this request, which its Stop names. */
    attemptId: attemptIdSchema.optional(),
    /** A new message is appended; an existing user message's id means "edit it". */
    message: incomingUserMessageSchema,
    throughId: throughIdSchema,
  }),
  z.strictObject({
    trigger: z.literal("regenerate-message"),
    chatId: z.string().min(1).max(100),
    modelId: modelIdSchema.optional(),
    attemptId: attemptIdSchema.optional(),
    /** The reply to replace; absent means the last one. */
    messageId: z.string().min(1).max(100).optional(),
    throughId: throughIdSchema,
  }),
]);

/**
 * What a turn is asked to do. Over HTTP only the schema's two triggers exist;
 * `continue` is the server's own: answer the stored history as it stands
 * (a replay of recorded conversations uses it to make one model call per step).
 */
export type TurnRequest =
  | z.infer<typeof turnRequestSchema>
  | { trigger: "continue"; chatId: string; modelId?: string; attemptId?: string };

/** The message a new-message request brings. */
export type IncomingUserMessage = Extract<TurnRequest, { trigger: "submit-message" }>["message"];

/**
 * A new message as it is stored and sent. Its text is storable as it is: the request's schema
 * refuses any the database would not hold.
 */
export function userMessageRow(incoming: IncomingUserMessage) {
  return {
    id: incoming.id,
    role: "user",
    parts: incoming.parts,
    metadata: null,
  } as const satisfies StoredMessage;
}

/**
 * Request body limit: the message cap as JSON may send it — six bytes a character for a control
 * character (`\u0001`), which a browser escapes — plus room for the rest of the request.
 */
export const TURN_REQUEST_MAX_BYTES = 6 * MESSAGE_MAX_CHARS + 16_000;
