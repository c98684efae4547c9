import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

/**
 * Recorded agent conversations for the `replay` benchmark, one JSON object per line:
 * `{ id, source, meta, turns: [{ role, text, toolCalls?: [{ name, args, result }] }] }`
 * (../shared/corpus/README.md). Any file in that format replays the same way.
 */

/** The corpus the benchmark replays unless `REPLAY_CORPUS` names another file. */
export const DEFAULT_CORPUS = "../shared/corpus/conversations.jsonl";

const toolCallSchema = z.object({
  name: z.string().min(1),
  args: z.union([z.record(z.string(), z.unknown()), z.string()]),
  result: z.string(),
});

const turnSchema = z.object({
  role: z.enum(["user", "assistant"]),
  text: z.string(),
  toolCalls: z.array(toolCallSchema).optional(),
});

const conversationSchema = z.object({
  id: z.string().min(1),
  source: z.string().optional(),
  meta: z.unknown().optional(),
  turns: z.array(turnSchema).min(1),
});

export type CorpusToolCall = z.infer<typeof toolCallSchema>;
export type CorpusTurn = z.infer<typeof turnSchema>;
export type Conversation = z.infer<typeof conversationSchema>;

/** `file` resolved from the repository root (the bench runs from there) unless absolute. */
export function resolveCorpusPath(file: string | undefined, repoRoot: string): string {
  return path.resolve(repoRoot, file?.trim() ? file : DEFAULT_CORPUS);
}

export function loadCorpus(file: string): Conversation[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const conversations: Conversation[] = [];
  for (const [index, line] of lines.entries()) {
    if (!line.trim()) continue;
    const parsed = conversationSchema.safeParse(JSON.parse(line));
    if (!parsed.success) {
      throw new Error(`${file}:${index + 1}: not a conversation: ${parsed.error.message}`);
    }
    conversations.push(parsed.data);
  }
  if (conversations.length === 0) throw new Error(`${file} holds no conversations`);
  return conversations;
}

/** A tool call's arguments as an object: the corpus may store them as JSON text or bare text. */
export function argsObject(args: CorpusToolCall["args"]): Record<string, unknown> {
  if (typeof args !== "string") return args;
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // Not JSON: a bare command line.
  }
  return { command: args };
}

/** Every string inside a tool call's arguments, for identifier extraction. */
export function argsText(args: CorpusToolCall["args"]): string {
  const strings: string[] = [];
  const walk = (value: unknown) => {
    if (typeof value === "string") strings.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(argsObject(args));
  return strings.join("\n");
}

/**
 * The corpus's assistant turn as a stored UIMessage's parts: its text, then each tool call
 * with its recorded result, as the AI SDK stores a finished static tool call.
 */
export function assistantParts(turn: CorpusTurn, callIdPrefix: string): unknown[] {
  const parts: unknown[] = [{ type: "step-start" }];
  if (turn.text.trim()) parts.push({ type: "text", text: turn.text, state: "done" });
  for (const [i, call] of (turn.toolCalls ?? []).entries()) {
    parts.push({
      type: `tool-${call.name}`,
      toolCallId: `${callIdPrefix}-${i}`,
      state: "output-available",
      input: argsObject(call.args),
      output: call.result,
    });
  }
  return parts;
}

/**
 * The model calls a conversation makes: one per assistant turn, and one for a user turn
 * that no assistant turn answers (the request is still sent; there is nothing to store).
 */
export function plannedCalls(conversation: Conversation): number {
  let calls = 0;
  for (const [i, turn] of conversation.turns.entries()) {
    const next = conversation.turns[i + 1];
    if (turn.role === "assistant" || next?.role !== "assistant") calls += 1;
  }
  return calls;
}
