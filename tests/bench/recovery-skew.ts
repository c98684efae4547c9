import { COMPACTION_TRACE_TOOL_NAME } from "@/lib/message/ui-message";
import { promptTokenSequence } from "../fixtures/fake-openai/tokens";
import type { RecordedRequest } from "../fixtures/fake-openai/types";
import type { Chunk } from "./chat-turns";
import { isSummarizerRequest } from "./sim-metrics";
import { createRandom } from "./sim-plan";
import type { ObservedTurn } from "./sim-run";

/**
 * The `recovery` benchmark's skewed simulation, minus the simulation itself: the per-turn
 * token skew of the fake server, and what is read off each turn to tell how recovery coped.
 * Of Fold it imports only the trace's tool name (lib/message/ui-message.ts reads no environment).
 */

export const MIN_SCALE = 0.8;
export const MAX_SCALE = 1.2;
const SKEW_SEED = 0x5c3_e020;

/**
 * The fake server's tokenScale for each turn: a fresh seeded draw every turn, uniform in
 * [0.8, 1.2] (three decimals). Fold calibrates with an EMA from each turn's real count, so it
 * always prices the next turn at roughly the recent average; a draw far from that average is
 * a surprise of up to ±20 % of the whole prompt that calibration cannot learn.
 */
export function skewSequence(turns: number): number[] {
  const random = createRandom(SKEW_SEED);
  return Array.from(
    { length: turns },
    () => Math.round((MIN_SCALE + random() * (MAX_SCALE - MIN_SCALE)) * 1000) / 1000,
  );
}

type TraceOutput = { outcome?: unknown; reason?: unknown; tokensBefore?: unknown };

/** The compact_context trace results a turn streamed. */
function traceOutputs(chunks: readonly Chunk[]): TraceOutput[] {
  const traceIds = new Set(
    chunks
      .filter((c) => c.type === "tool-input-available" && c.toolName === COMPACTION_TRACE_TOOL_NAME)
      .map((c) => c.toolCallId),
  );
  return chunks
    .filter((c) => c.type === "tool-output-available" && traceIds.has(c.toolCallId))
    .map((c) => (typeof c.output === "object" && c.output !== null ? c.output : {}) as TraceOutput);
}

export type SkewTurn = {
  /** 1-based. */
  turn: number;
  scale: number;
  chatRequests: number;
  /** Chat requests the fake server answered 400 (context overflow). */
  chatOverflows: number;
  summarizerOverflows: number;
  /** Recovery traces (outcome "trimmed") by reason. */
  trimmedOverflow: number;
  trimmedLength: number;
  /** The stored reply's step count (of the attempt that answered). */
  storedSteps: number | null;
  failed: boolean;
  maxAcceptedPrompt: number;
  /** The first chat request: the fake server's count ÷ its unscaled tokenizer count. */
  realizedScale: number | null;
  /** …that count, and Fold's calibrated estimate of the same request (stored stats). */
  firstPromptTokens: number | null;
  estimatedTokens: number | null;
  describe: string;
};

/** What the fake server would have counted for this request at tokenScale 1. */
function unscaledTokens(request: RecordedRequest): number {
  const tools = Array.isArray(request.body.tools) ? request.body.tools : undefined;
  return promptTokenSequence({ messages: request.messages, tools }).length;
}

export class SkewObserver {
  readonly turns: SkewTurn[] = [];

  constructor(private readonly scales: readonly number[]) {}

  scaleOf(index: number): number {
    return this.scales[index] ?? 1;
  }

  observe(observed: ObservedTurn): void {
    const { turn, chunks, requests, metadata, problem } = observed;
    const chat = requests.filter((r) => !isSummarizerRequest(r));
    const summarizer = requests.filter((r) => isSummarizerRequest(r));
    const trimmed = traceOutputs(chunks).filter((t) => t.outcome === "trimmed");
    const accepted = chat.filter((r) => r.status === 200);
    const scale = this.scaleOf(turn.index);
    const first = chat[0];
    this.turns.push({
      turn: turn.index + 1,
      scale,
      chatRequests: chat.length,
      chatOverflows: chat.filter((r) => r.status === 400).length,
      summarizerOverflows: summarizer.filter((r) => r.status === 400).length,
      trimmedOverflow: trimmed.filter((t) => t.reason === "overflow").length,
      trimmedLength: trimmed.filter((t) => t.reason === "length").length,
      storedSteps: metadata?.stats?.steps ?? null,
      failed: problem !== null,
      maxAcceptedPrompt: Math.max(0, ...accepted.map((r) => r.promptTokens)),
      realizedScale: first ? first.promptTokens / unscaledTokens(first) : null,
      firstPromptTokens: first?.promptTokens ?? null,
      estimatedTokens: metadata?.stats?.estimatedInputTokens ?? null,
      describe: `turn ${turn.index + 1} (tokenScale ${scale}${turn.page ? `, fetch_url ${turn.page.bytes} B` : ""}): ${requests.map(describe).join("; ")}${trimmed.length ? `; trimmed traces: ${trimmed.map((t) => `${String(t.reason)} from ${String(t.tokensBefore)}`).join(", ")}` : ""}${problem ? `; FAILED: ${problem.slice(0, 300)}` : ""}`,
    });
  }

  /** Turns recovery stepped in: a "trimmed" trace, or a 400 the turn still answered. */
  recoveredTurns(): SkewTurn[] {
    return this.turns.filter(
      (t) =>
        t.trimmedOverflow + t.trimmedLength > 0 ||
        (!t.failed && t.chatOverflows + t.summarizerOverflows > 0),
    );
  }

  /** Chat calls recovery added: every overflow 400, plus one re-answer per length retry. */
  extraProviderCalls(): number {
    return this.turns.reduce((n, t) => n + t.chatOverflows + t.trimmedLength, 0);
  }

  /**
   * The same, counted exactly: chat requests beyond the stored reply's steps (a length retry
   * re-runs a tool turn's whole loop, so it can cost more than one call). Answered turns only.
   */
  chatRequestsBeyondSteps(): number {
    return this.turns.reduce(
      (n, t) => n + (t.storedSteps === null ? 0 : Math.max(0, t.chatRequests - t.storedSteps)),
      0,
    );
  }

  /** Real ÷ estimated tokens of each answered turn's first chat request. */
  estimateRatios(): number[] {
    return this.turns.flatMap((t) =>
      t.firstPromptTokens !== null && t.estimatedTokens
        ? [t.firstPromptTokens / t.estimatedTokens]
        : [],
    );
  }

  sum(pick: (t: SkewTurn) => number): number {
    return this.turns.reduce((n, t) => n + pick(t), 0);
  }
}

function describe(request: RecordedRequest): string {
  const kind = isSummarizerRequest(request) ? "summarizer" : "chat";
  return `${kind} ${request.status} prompt=${request.promptTokens} msgs=${request.messages.length}`;
}
