import type { UIMessageChunk } from "ai";
import { z } from "zod";
import { COMPACTION_TRACE_TOOL_NAME } from "@/lib/message/ui-message";

/**
 * The compaction trace (DESIGN §8.5): a `compact_context` tool call in the
 * timeline — running while the summarizer works, then its result. Stored with
 * the assistant message; stripped before the model sees anything.
 */

export const traceInputSchema = z.object({
  reason: z.string(),
  tokensBefore: z.number(),
  messages: z.number(),
  startedAt: z.number(),
});

export const traceOutputSchema = z.object({
  /** `stopped`: the user stopped the turn while the summarizer ran; nothing was folded. */
  outcome: z.enum([
    "summarized",
    "fallback",
    "trimmed",
    "skipped",
    "conflict",
    "failed",
    "stopped",
  ]),
  reason: z.string(),
  tokensBefore: z.number(),
  tokensAfter: z.number(),
  savedPct: z.number(),
  messagesSummarized: z.number(),
  summarizerModel: z.string().nullable(),
  durationMs: z.number(),
  summary: z.string().nullable(),
  note: z.string().nullable(),
});

export type TraceInput = z.infer<typeof traceInputSchema>;
export type TraceOutput = z.infer<typeof traceOutputSchema>;

/**
 * The outcomes of a fold whose summary was stored: the ones with a timeline entry of their own.
 * One skipped, lost to another writer, failed or stopped folded nothing.
 */
export const FOLDED_OUTCOMES = [
  "summarized",
  "fallback",
] as const satisfies readonly TraceOutput["outcome"][];

export const isFoldedOutcome = (outcome: string | undefined): boolean =>
  FOLDED_OUTCOMES.some((folded) => folded === outcome);

export function traceStartChunk(toolCallId: string, input: TraceInput): UIMessageChunk {
  return { type: "tool-input-available", toolCallId, toolName: COMPACTION_TRACE_TOOL_NAME, input };
}

export function traceEndChunk(toolCallId: string, output: TraceOutput): UIMessageChunk {
  return { type: "tool-output-available", toolCallId, output };
}

/**
 * A compaction outside a turn (compact-now, a summary edit, a background compaction) as its
 * own timeline entry: a finished `compact_context` call, never a reply, never sent to the model.
 */
export function traceEntry(
  trace: TraceOutput,
  input: TraceInput,
  ids: { messageId: string; toolCallId: string },
) {
  return {
    id: ids.messageId,
    role: "assistant" as const,
    parts: [
      {
        type: `tool-${COMPACTION_TRACE_TOOL_NAME}`,
        toolCallId: ids.toolCallId,
        state: "output-available",
        input,
        output: trace,
      },
    ],
    metadata: { compaction: true },
  };
}

export function savedPct(before: number, after: number): number {
  if (before <= 0) return 0;
  return Math.round(((before - after) / before) * 1000) / 10;
}
