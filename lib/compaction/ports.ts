/**
 * What the pure compaction core needs from the outside world, passed in by the
 * shell (lib/chat, lib/turn): DESIGN §1.6, "functional core, imperative shell".
 */

/** A counter or timing for the logs (DESIGN §14); the shell passes lib/log's `metric`. */
export type MetricSink = (name: string, fields: Record<string, unknown>) => void;

/** For callers (tests, benchmarks) that do not collect metrics. */
export const ignoreMetrics: MetricSink = () => undefined;

/** One summarizer model call, as the shell makes it (no SDK retries: the cascade is the retry). */
export type SummarizerCall = {
  instructions: string;
  prompt: string;
  maxOutputTokens: number;
  abortSignal: AbortSignal;
};

export type SummarizerReply = {
  text: string;
  /** "length" when the reply stopped at the output limit. */
  finishReason?: string;
  /** Of the output, what the model spent thinking (a reasoning model), where it says. */
  reasoningTokens?: number;
};

/** A model that can write a summary: its id for reports, its window for sizing, and the call. */
export type SummarizerModel = {
  /** `provider:model`, as reported in results, attempts and metrics. */
  id: string;
  contextWindow: number;
  generate: (call: SummarizerCall) => Promise<SummarizerReply>;
};
