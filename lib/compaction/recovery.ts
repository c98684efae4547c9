import type {
  APICallError,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Middleware,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
} from "@ai-sdk/provider";
import { type Budget, outputReserveOf } from "@/lib/context/budget";
import { unitsFromProviderPrompt } from "@/lib/context/count-units";
import type { TokenEstimator } from "@/lib/context/tokens";
import {
  ContextOverflowError,
  isContextOverflowError,
  overflowInStream,
  reportedPromptTokens,
  reportedWindowTokens,
} from "./overflow";
import { ignoreMetrics, type MetricSink } from "./ports";
import { type Pinned, trimToFit } from "./trim";

/**
 * Recovery (DESIGN §10): the net under everything. A middleware around the
 * model that, when the provider still says "too long" (or cuts a reply short
 * because the window is full), trims the prompt in memory and retries exactly
 * once. Always on, whatever COMPACTION_ENABLED says.
 */

/** Recovery keeps at least this many of the newest tool results whole. */
const MIN_KEEP_TOOL_RESULTS = 2;
/** A reply this close to the window's end was cut short by the window, not by choice. */
const WINDOW_END_SLACK_TOKENS = 32;

export type RecoveryEvent = {
  kind: "overflow" | "length";
  /** Fold's raw estimate of the prompt before and after trimming. */
  tokensBefore: number;
  tokensAfter: number;
  /** The provider's own count of the rejected prompt, when it said. */
  reportedTokens: number | null;
  /**
   * The window the provider said it has, when that is smaller than the one Fold budgeted with
   * (a server restarted with a smaller context): the retry was trimmed for it.
   */
  statedWindow: number | null;
};

export type RecoveryOptions = {
  modelId: string;
  /** The chat's budget; `budget.contextWindow` tells a reply cut short by the window. */
  budget: Budget;
  /** Calibrated ratio of real to estimated tokens. */
  ratio: number;
  estimator: TokenEstimator;
  keepRecentToolResults: number;
  /** Raw tokens of the tool schemas (sent beside the prompt). */
  toolOverheadTokens: number;
  /** What the user pinned (trim.ts, Pinned): cut last. */
  pinned?: Pinned;
  /** Mark the chat dirty, show the trace, record the event. Failures here never stop the retry. */
  onRecovery?: (event: RecoveryEvent) => Promise<void> | void;
  onMetric?: MetricSink;
};

function estimatePrompt(estimator: TokenEstimator, prompt: LanguageModelV4Prompt): number {
  return estimator.estimate(unitsFromProviderPrompt(prompt));
}

/**
 * True when a reply stopped because the window ran out, not at an output
 * limit the caller set (DESIGN §10: "cut short by the window").
 */
export function endsAtWindow(
  reply: {
    finishReason: string;
    inputTokens: number;
    outputTokens: number;
    maxOutputTokens?: number;
  },
  contextWindow: number,
): boolean {
  if (reply.finishReason !== "length") return false;
  if (reply.maxOutputTokens !== undefined && reply.outputTokens >= reply.maxOutputTokens)
    return false;
  return reply.inputTokens + reply.outputTokens >= contextWindow - WINDOW_END_SLACK_TOKENS;
}

export function cutShortByWindow(
  result: Pick<LanguageModelV4GenerateResult, "finishReason" | "usage">,
  params: LanguageModelV4CallOptions,
  contextWindow: number,
): boolean {
  return endsAtWindow(
    {
      finishReason: result.finishReason.unified,
      inputTokens: result.usage.inputTokens.total ?? 0,
      outputTokens: result.usage.outputTokens.total ?? 0,
      maxOutputTokens: params.maxOutputTokens,
    },
    contextWindow,
  );
}

export function createRecoveryMiddleware(options: RecoveryOptions): LanguageModelV4Middleware {
  const { estimator, budget } = options;
  const metric = options.onMetric ?? ignoreMetrics;

  async function trimmed(
    params: LanguageModelV4CallOptions,
    kind: RecoveryEvent["kind"],
    error?: unknown,
  ) {
    const before = estimatePrompt(estimator, params.prompt);
    // When the provider said how big the prompt was, trust that over the calibration.
    const overflow = error && isContextOverflowError(error) ? error : null;
    const reportedTokens = overflow ? reportedPromptTokens(overflow) : null;
    const stated = overflow ? reportedWindowTokens(overflow) : null;
    const statedWindow = stated !== null && stated < budget.contextWindow ? stated : null;
    const skew = refusedSkew(options.ratio, reportedTokens, before, options.toolOverheadTokens);
    // In a smaller window the provider stated, the reply asked for gets the room that window
    // gives a reply (a request whose prompt and output limit together pass it is refused
    // again), and the prompt the target that window would have, within what the reply leaves.
    const maxOutputTokens =
      statedWindow === null || params.maxOutputTokens === undefined
        ? params.maxOutputTokens
        : Math.min(
            params.maxOutputTokens,
            outputReserveOf({
              contextWindow: statedWindow,
              maxOutputTokens: params.maxOutputTokens,
            }),
          );
    const scale = (tokens: number) =>
      statedWindow === null ? tokens : Math.floor((tokens * statedWindow) / budget.contextWindow);
    const target =
      statedWindow === null
        ? budget.target
        : Math.min(
            scale(budget.target),
            statedWindow - (maxOutputTokens ?? 0) - scale(budget.safetyReserve),
          );
    const limitTokens = Math.max(0, Math.floor(target / skew) - options.toolOverheadTokens);
    const result = trimToFit(params.prompt, {
      limitTokens,
      keepRecentToolResults: Math.max(
        MIN_KEEP_TOOL_RESULTS,
        Math.floor(options.keepRecentToolResults / 2),
      ),
      estimate: (prompt) => estimatePrompt(estimator, prompt),
      force: true,
      pinned: options.pinned,
    });
    metric("recovery.triggered", {
      modelId: options.modelId,
      kind,
      before,
      after: result.after,
      reportedTokens,
      statedWindow,
    });
    try {
      await options.onRecovery?.({
        kind,
        tokensBefore: before,
        tokensAfter: result.after,
        reportedTokens,
        statedWindow,
      });
    } catch {
      // Bookkeeping must never cost the user their answer.
    }
    return { ...params, prompt: result.messages, maxOutputTokens };
  }

  function giveUp(error: unknown): never {
    metric("recovery.failed", { modelId: options.modelId });
    throw new ContextOverflowError(options.modelId, { cause: error });
  }

  return {
    specificationVersion: "v4",
    wrapGenerate: async ({ doGenerate, params, model }) => {
      let result: LanguageModelV4GenerateResult;
      try {
        result = await doGenerate();
      } catch (error) {
        if (!isContextOverflowError(error)) throw error;
        const retry = await trimmed(params, "overflow", error);
        try {
          return await model.doGenerate(retry);
        } catch (second) {
          if (isContextOverflowError(second)) giveUp(second);
          throw second;
        }
      }
      if (!cutShortByWindow(result, params, budget.contextWindow)) return result;
      const retry = await trimmed(params, "length");
      const second = await model.doGenerate(retry);
      if (cutShortByWindow(second, retry, budget.contextWindow))
        giveUp(new Error("reply cut short by the window twice"));
      return second;
    },
    wrapStream: async ({ doStream, params, model }) => {
      const first = await openedOrRefused(doStream);
      if ("opened" in first) return first.opened;
      const retry = await trimmed(params, "overflow", first.refusal);
      const second = await openedOrRefused(() => model.doStream(retry));
      if ("opened" in second) return second.opened;
      giveUp(second.refusal);
    },
  };
}

/** Parts a stream opens with before any of the reply: a refusal may still come after them. */
const OPENING_PARTS = new Set<LanguageModelV4StreamPart["type"]>([
  "stream-start",
  "response-metadata",
  "raw",
]);

/**
 * A stream call's outcome: the stream, or the provider's refusal of the prompt as too long,
 * whether it answered with an error status or opened the stream and refused in its first event
 * (some proxies open it before their upstream answers). What the stream sent before its first
 * part of the reply is read here and given again, in order; any other error stays the stream's.
 */
async function openedOrRefused(
  call: () => PromiseLike<LanguageModelV4StreamResult>,
): Promise<{ opened: LanguageModelV4StreamResult } | { refusal: APICallError }> {
  let result: LanguageModelV4StreamResult;
  try {
    result = await call();
  } catch (error) {
    if (isContextOverflowError(error)) return { refusal: error };
    throw error;
  }
  const reader = result.stream.getReader();
  const read: LanguageModelV4StreamPart[] = [];
  let failure: { error: unknown } | null = null;
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        break;
      }
      const part = next.value;
      if (part.type === "error") {
        const refusal = overflowInStream(part.error);
        if (refusal) {
          await reader.cancel().catch(() => undefined);
          return { refusal };
        }
      }
      read.push(part);
      if (!OPENING_PARTS.has(part.type)) break;
    }
  } catch (error) {
    // The stream failed before its reply began (a stop, a dropped connection): it fails so.
    failure = { error };
  }
  const stream = new ReadableStream<LanguageModelV4StreamPart>({
    async pull(controller) {
      const part = read.shift();
      if (part !== undefined) {
        controller.enqueue(part);
        return;
      }
      if (failure) throw failure.error;
      if (done) {
        controller.close();
        return;
      }
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { opened: { ...result, stream } };
}

/**
 * How far Fold under-counts a prompt the provider refused: its count of the refused prompt over
 * Fold's raw estimate of it (plus the overhead the estimate leaves out), never below the
 * calibrated ratio; the ratio alone when the provider gave no count.
 */
export function refusedSkew(
  ratio: number,
  reportedTokens: number | null | undefined,
  estimatedTokens: number,
  overheadTokens: number,
): number {
  return reportedTokens && estimatedTokens > 0
    ? Math.max(ratio, reportedTokens / (estimatedTokens + overheadTokens))
    : ratio;
}
