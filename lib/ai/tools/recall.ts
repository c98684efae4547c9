import { tool, zodSchema } from "ai";
import { z } from "zod";

/**
 * `recall`: the chat's own memory beyond its summary. Messages the summary condensed stay
 * stored word for word; this tool lets the model search them, or read one by the number the
 * summary's references cite ("[12-40 x3]"), when the summary kept the gist but not the detail
 * the user now asks about. The turn binds it to its chat (lib/chat/recall.ts); only messages
 * the summary covers, and those its view sends cut (an old tool output as a placeholder), are
 * reachable: the rest are in the model's view as written.
 */

export const RECALL_QUERY_MAX_CHARS = 200;

/** Far above any chat's length; it keeps JSON Schema's integer bounds short. */
const MAX_POSITION = 10_000_000;

/**
 * Every request carries this schema, so it is kept bare: what the fields mean is in the tool's
 * description, and the result's notes say what went wrong.
 */
export const recallInputSchema = z
  .object({
    query: z.string().trim().min(1).max(RECALL_QUERY_MAX_CHARS).optional(),
    message: z.number().int().min(1).max(MAX_POSITION).optional(),
    offset: z.number().int().min(0).max(MAX_POSITION).optional(),
  })
  .refine((input) => (input.query === undefined) !== (input.message === undefined), {
    error: "give either query or message",
  });

export type RecallInput = z.infer<typeof recallInputSchema>;
/** Converted to JSON Schema once and kept, as the other tools' are. */
const recallInputJsonSchema = zodSchema(recallInputSchema);

export type RecallMatch = { message: number; role: string; excerpt: string };

export type RecallSearchResult = {
  /** The message numbers the summary covers ("1-240"), or null when nothing is condensed yet. */
  covered: string | null;
  matches: RecallMatch[];
  note?: string;
};

export type RecallReadResult = {
  covered: string | null;
  message?: number;
  role?: string;
  text?: string;
  /** Where the rest of a long message starts: pass it back as `offset`. */
  nextOffset?: number;
  note?: string;
};

/** How a turn reaches its chat's condensed messages. */
export type RecallPort = {
  search(query: string): Promise<RecallSearchResult>;
  read(message: number, offset: number): Promise<RecallReadResult>;
};

export function createRecallTool(port?: RecallPort) {
  return tool({
    description:
      "Search this chat's messages the summary condensed (query: words or an exact value), or " +
      "read one word for word (message: a number its references cite; offset: a read's nextOffset).",
    inputSchema: recallInputJsonSchema,
    execute: async ({ query, message, offset }) => {
      if (!port) throw new Error("recall is not available in this request.");
      if (message !== undefined) return port.read(message, offset ?? 0);
      return port.search(query ?? "");
    },
  });
}
