/**
 * Stage 2 (DESIGN §8, "The summarizer"): fold a span into the running summary
 * with a cascade of models. Each request is sized for the summarizer's own
 * window — a span too big for one call is folded chunk by chunk on message
 * boundaries — and each answer is validated before it can replace history.
 * The caller owns the fallback: this throws `SummarizerFailedError`.
 */
import { APICallError, generateText, type LanguageModel } from "ai";
import type { FoldUIMessage } from "@/lib/chat/ui-message";
import { MESSAGE_OVERHEAD_TOKENS, type TokenEstimator } from "@/lib/context/tokens";
import { metric } from "@/lib/log";
import { type ChunkItem, packChunk } from "./chunking";
import { preserveIdentifiers } from "./preserve";
import {
  headingsReminder,
  missingHeadings,
  SUMMARY_HEADINGS,
  summarizerInstructions,
  summarizerPrompt,
} from "./prompts";
import { serializeMessage } from "./serialize";

/** Headroom in the summarizer's window for tokenizer differences (DESIGN §7's reserveRatio). */
const WINDOW_RESERVE_RATIO = 0.05;
/** Shorter than this cannot hold six headings with anything under them. */
const SUMMARY_MIN_CHARS = 20;
/** The model is asked for this share of summaryBudget; the rest is room for Verbatim references. */
const SUMMARY_BODY_SHARE = 0.8;
/** The appendix always gets at least this share of summaryBudget, however long the summary. */
const APPENDIX_MIN_SHARE = 0.25;
/** A 400/413 halves the chunk at most this often per model; then the model has failed. */
const MAX_CHUNK_HALVINGS = 4;
/** A chunk smaller than this is not worth a call: the window is too small for the budget. */
const MIN_CHUNK_TOKENS = 64;
/** Instructions and prompt travel as two provider messages. */
const WIRE_MESSAGES = 2;

export type SummarizerModel = {
  /** `provider:model`, as reported in results, attempts and metrics. */
  id: string;
  model: LanguageModel;
  contextWindow: number;
};

export type SummarizerOptions = {
  /** The cascade, tried in order. */
  models: SummarizerModel[];
  /** Per model call. */
  timeoutMs: number;
  estimator: TokenEstimator;
  now?: () => number;
};

export type SummarizeRequest = {
  previousSummary: string | null;
  /** The full, unpruned span; pruned here for the model, used whole by the preservation guard. */
  span: FoldUIMessage[];
  /** Output ceiling of each call; the Verbatim references appendix counts inside it. */
  summaryBudget: number;
  signal?: AbortSignal;
};

export type SummarizeResult = {
  summary: string;
  /** The model that wrote the final fold. */
  model: string;
  /** Estimated tokens of span text actually sent, summed over chunks. */
  inputTokens: number;
  chunks: number;
  /** Model calls made, failed ones and heading retries included. */
  attempts: number;
};

export type Summarize = (request: SummarizeRequest) => Promise<SummarizeResult>;

export type SummarizerAttempt = { model: string; error: Error };

/** Every model in the cascade failed; the caller writes the fallback digest. */
export class SummarizerFailedError extends Error {
  readonly attempts: SummarizerAttempt[];

  constructor(attempts: SummarizerAttempt[]) {
    const detail = attempts.map((a) => `${a.model}: ${a.error.message}`).join("; ");
    super(`every summarizer model failed${detail ? ` (${detail})` : ""}`);
    this.name = "SummarizerFailedError";
    this.attempts = attempts;
  }
}

/** An answer Fold will not use as a summary. */
export class SummaryRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SummaryRejectedError";
  }
}

/** Progress shared by the cascade: chunks already folded stay folded when a later model takes over. */
type Fold = { position: number; running: string | null; inputTokens: number; chunks: number };

export function createSummarizer(options: SummarizerOptions): Summarize {
  const { models, timeoutMs, estimator } = options;
  const now = options.now ?? Date.now;
  const countText = (text: string) => estimator.countText(text);
  const instructions = summarizerInstructions();

  return async function summarize(request) {
    const startedAt = now();
    const bodyBudget = Math.floor(SUMMARY_BODY_SHARE * request.summaryBudget);
    let calls = 0;

    /** One model call: timeout + the caller's signal, no SDK retries, the output ceiling. */
    const call = async (entry: SummarizerModel, prompt: string): Promise<string> => {
      request.signal?.throwIfAborted();
      calls += 1;
      const timeout = AbortSignal.timeout(timeoutMs);
      try {
        const result = await generateText({
          model: entry.model,
          instructions,
          prompt,
          maxOutputTokens: request.summaryBudget,
          maxRetries: 0,
          abortSignal: request.signal ? AbortSignal.any([timeout, request.signal]) : timeout,
        });
        const text = cleanSummary(result.text);
        if (text.length < SUMMARY_MIN_CHARS) {
          throw new SummaryRejectedError(`summary is empty or too short (${text.length} chars)`);
        }
        return text;
      } catch (error) {
        if (timeout.aborted && !request.signal?.aborted) {
          throw new Error(`timed out after ${timeoutMs} ms`, { cause: error });
        }
        throw error;
      }
    };

    /** Fold one chunk into the running summary; one retry when headings are missing. */
    const foldChunk = async (
      entry: SummarizerModel,
      running: string | null,
      spanText: string,
    ): Promise<string> => {
      const prompt = summarizerPrompt({
        previousSummary: running,
        spanText,
        budgetTokens: bodyBudget,
        countTokens: countText,
      });
      let summary = await call(entry, prompt);
      let missing = missingHeadings(summary);
      if (missing.length > 0) {
        summary = await call(entry, `${prompt}\n\n${headingsReminder(missing)}`);
        missing = missingHeadings(summary);
        if (missing.length > 0) {
          throw new SummaryRejectedError(`summary lacks headings: ${missing.join(", ")}`);
        }
      }
      const inputTokens = countText(running ?? "") + countText(spanText);
      const summaryTokens = countText(summary);
      if (summaryTokens > inputTokens) {
        throw new SummaryRejectedError(
          `summary is longer than its input (${summaryTokens} > ${inputTokens} tokens)`,
        );
      }
      return summary;
    };

    /** Span tokens one call to `entry` can carry next to the instructions, prompt and output. */
    const chunkCapacity = (entry: SummarizerModel, running: string | null): number => {
      const frame =
        countText(instructions) +
        countText(
          summarizerPrompt({
            previousSummary: running,
            spanText: "",
            budgetTokens: bodyBudget,
            countTokens: countText,
          }),
        ) +
        countText(headingsReminder(SUMMARY_HEADINGS)) +
        WIRE_MESSAGES * MESSAGE_OVERHEAD_TOKENS;
      const reserve = Math.ceil(WINDOW_RESERVE_RATIO * entry.contextWindow) + frame;
      return entry.contextWindow - request.summaryBudget - reserve;
    };

    /** Folds the rest of the span with one model; a 400/413 halves the chunk and retries. */
    const runModel = async (
      entry: SummarizerModel,
      items: ChunkItem[],
      fold: Fold,
    ): Promise<void> => {
      let chunkLimit = Number.POSITIVE_INFINITY; // lowered by each 400/413
      let halvings = 0;
      while (fold.position < items.length) {
        const capacity = Math.min(chunkCapacity(entry, fold.running), chunkLimit);
        if (capacity < MIN_CHUNK_TOKENS) {
          throw new Error(
            `no room for the span in a ${entry.contextWindow}-token window (chunk capacity ${capacity} tokens)`,
          );
        }
        const chunk = packChunk(items, fold.position, capacity, countText);
        try {
          fold.running = await foldChunk(entry, fold.running, chunk.text);
        } catch (error) {
          if (isRequestTooLarge(error) && halvings < MAX_CHUNK_HALVINGS) {
            halvings += 1;
            chunkLimit = Math.floor(countText(chunk.text) / 2);
            continue;
          }
          throw error;
        }
        fold.position = chunk.end;
        fold.chunks += 1;
        fold.inputTokens += countText(chunk.text);
      }
    };

    const items: ChunkItem[] = request.span
      .map((message) => serializeMessage(message))
      .filter((text) => text.length > 0)
      .map((text) => ({ text, tokens: countText(text) }));
    const previousSummary = request.previousSummary?.trim() ? request.previousSummary : null;
    if (items.length === 0) {
      if (previousSummary === null) throw new RangeError("nothing to summarize: the span is empty");
      return { summary: previousSummary, model: "", inputTokens: 0, chunks: 0, attempts: 0 };
    }

    const fold: Fold = { position: 0, running: previousSummary, inputTokens: 0, chunks: 0 };
    const failures: SummarizerAttempt[] = [];
    for (const entry of models) {
      request.signal?.throwIfAborted();
      try {
        await runModel(entry, items, fold);
      } catch (error) {
        if (request.signal?.aborted) throw error; // the turn is gone: no point asking the next model
        failures.push({ model: entry.id, error: asError(error) });
        continue;
      }
      const body = fold.running ?? "";
      const summary = preserveIdentifiers({
        span: request.span,
        previousSummary,
        summary: body,
        maxTokens: Math.max(
          request.summaryBudget - countText(body),
          Math.ceil(APPENDIX_MIN_SHARE * request.summaryBudget),
        ),
        countTokens: countText,
      });
      metric("summarize.latency_ms", {
        model: entry.id,
        ms: now() - startedAt,
        chunks: fold.chunks,
      });
      return {
        summary,
        model: entry.id,
        inputTokens: fold.inputTokens,
        chunks: fold.chunks,
        attempts: calls,
      };
    }
    throw new SummarizerFailedError(failures);
  };
}

/** A provider refusing the request's size (or shape): smaller chunks may pass. */
function isRequestTooLarge(error: unknown): boolean {
  return APICallError.isInstance(error) && (error.statusCode === 400 || error.statusCode === 413);
}

/** The model's text without a code fence around it or a preamble before the first heading. */
function cleanSummary(text: string): string {
  let out = text.trim();
  const fenced = /^```[\w-]*\n([\s\S]*?)\n?```$/.exec(out);
  if (fenced) out = (fenced[1] ?? "").trim();
  const firstHeading = out.search(/^#{1,6}\s/m);
  if (firstHeading > 0) out = out.slice(firstHeading);
  return out;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
