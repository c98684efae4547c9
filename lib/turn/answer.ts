import {
  convertToModelMessages,
  type FinishReason,
  type LanguageModel,
  type LanguageModelUsage,
  type ModelMessage,
  type ToolSet,
  toUIMessageStream,
  type UIMessageChunk,
} from "ai";
import { describeModelError } from "@/lib/ai/errors";
import type { RequestFrame } from "@/lib/ai/request-frame";
import type { ModelBudget } from "@/lib/chat/budget";
import type { CompactOutcome } from "@/lib/chat/compact";
import { ContextOverflowError } from "@/lib/compaction/overflow";
import { endsAtWindow, type RecoveryEvent } from "@/lib/compaction/recovery";
import { type Pinned, trimToFit } from "@/lib/compaction/trim";
import { addClassTokens, classTotal } from "@/lib/context/content-class";
import { applyRatio, defaultEstimator } from "@/lib/context/tokens";
import { env } from "@/lib/env";
import { log, metric } from "@/lib/log";
import { pinnedOf } from "@/lib/message/pins";
import { RETRY_MARKER_TYPE } from "@/lib/message/retry-marker";
import { buildStats, type MessageMetadata, sumUsage } from "@/lib/message/stats";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { type TurnDeadline, turnDeadline } from "./deadline";
import { outputLimitToSend, streamModelCall } from "./model-call";
import { observeTurn, type TurnObservations, writingMsAt } from "./observe";

export type AnswerContext = {
  chatId: string;
  model: LanguageModel;
  budget: ModelBudget;
  frame: RequestFrame<ToolSet>;
  compaction: CompactOutcome;
  observed: TurnObservations;
  startedAt: number;
  now: () => number;
  /** Recovery trimmed a request: record it (trace, dirty flag, event). */
  onRecovery: (event: RecoveryEvent) => Promise<void>;
  /** Aborts when the user stops the reply (from any instance). */
  stopSignal?: AbortSignal;
  /** Whether the user's day still has tokens, asked before each further step of the loop. */
  tokensLeft?: () => Promise<boolean>;
};

/**
 * Step 5 of a turn: the model call, written chunk by chunk into the turn's
 * stream. A reply the window cut short is not an answer: a marker says where
 * the retry starts, the request is trimmed in memory, and the model answers
 * once more (DESIGN §10); the chat compacts durably next turn.
 */
export async function answer(
  ctx: AnswerContext,
  write: (chunk: UIMessageChunk) => void,
): Promise<void> {
  const settings = env();
  const deadline = turnDeadline({
    idleMs: settings.turnIdleTimeoutMs,
    firstTokenMs: settings.turnFirstTokenTimeoutMs,
    maxMs: settings.turnMaxDurationMs,
  });
  const signal = ctx.stopSignal
    ? AbortSignal.any([deadline.signal, ctx.stopSignal])
    : deadline.signal;
  try {
    await answerWithin(ctx, signal, deadline, write);
  } finally {
    deadline.dispose();
  }
  // The model hung or ran too long: say so (the error chunk), and Retry asks again. A deadline
  // that fired once the model had finished cut nothing: the reply is whole.
  const failure = deadline.failure();
  if (failure && !ctx.observed.finished) throw failure;
  if (ctx.stopSignal?.aborted && !ctx.observed.finished) {
    // Stopped by the user: what was written so far is the reply, marked as stopped.
    ctx.observed.stopped = true;
    write({ type: "finish", messageMetadata: stoppedMetadata(ctx) } as UIMessageChunk);
  }
}

/**
 * The request's messages without the reasoning of turns before the latest user message:
 * providers drop it (Anthropic, OpenAI, the reasoning models' chat templates), yet an
 * OpenAI-compatible server was sent every past reply's thinking as `reasoning_content`, and
 * Fold counts none of it (count-units.ts, the same rule). The turn running keeps its own (a
 * reply waiting on a tool approval goes on from it). A reply that had only reasoned (stopped)
 * goes as no message: an empty one Anthropic refuses.
 */
export function withoutEarlierTurnsReasoning(messages: ModelMessage[]): ModelMessage[] {
  const lastUser = messages.findLastIndex((m) => m.role === "user");
  return messages.flatMap((message, i) => {
    if (i >= lastUser || message.role !== "assistant" || typeof message.content === "string")
      return [message];
    const content = message.content.filter((part) => part.type !== "reasoning");
    if (content.length === message.content.length) return [message];
    return content.length > 0 ? [{ ...message, content }] : [];
  });
}

async function answerWithin(
  ctx: AnswerContext,
  signal: AbortSignal,
  deadline: TurnDeadline,
  write: (chunk: UIMessageChunk) => void,
): Promise<void> {
  const messages = withoutEarlierTurnsReasoning(
    await convertToModelMessages(ctx.compaction.view, { tools: ctx.frame.tools }),
  );
  const maxSteps = env().turnMaxSteps;
  // The messages the user pinned, as the in-memory trims match them: one view, read once.
  const pinned = pinnedOf(ctx.compaction.view);
  const first = await streamAttempt(ctx, signal, deadline, messages, write, {
    maxSteps,
    pinned,
  });
  // A stop or a deadline landing after the model finished (between its last part and here)
  // cut nothing: the finished reply goes on to its finish chunk.
  if (signal.aborted && !ctx.observed.finished) return;
  if (ctx.observed.stoppedFor) {
    write(quotaStoppedFinish(ctx, first.finish));
    return;
  }
  if (!cutShortByWindow(ctx)) {
    if (first.finish) write(first.finish);
    return;
  }
  if (signal.aborted) {
    // Cut by the window and then stopped: no retry, the reply as stopped (answer).
    ctx.observed.finished = false;
    return;
  }
  // The cut attempt spent the day's last tokens: the retry, a request as large, is not sent past
  // them (as a tool loop's next step is not). What it wrote stays, stopped, and says why.
  if (ctx.tokensLeft && (await quotaStop(ctx, ctx.tokensLeft)())) {
    write(quotaStoppedFinish(ctx, first.finish));
    return;
  }

  // Only the step the window cut is asked again: the tool steps done before it go along (their
  // tools do not run twice), and the reply keeps them (answerParts). When they cannot be made to
  // fit (trimming only elides and caps), the retry starts from the view Tier 1 sized, as a whole.
  const { budget, ratio } = ctx.budget;
  const keepRecentToolResults = env().compaction.keepRecentToolResults;
  const trim = (list: ModelMessage[], keepSummary: boolean) =>
    trimToFit(list, {
      limitTokens: Math.max(0, Math.floor(budget.target / ratio) - ctx.frame.overheadTokens),
      keepRecentToolResults: Math.max(2, Math.floor(keepRecentToolResults / 2)),
      estimate: (l) => defaultEstimator.estimateModelMessages(l),
      force: true,
      pinned,
      keepSummary,
    });
  const finishedSteps = ctx.observed.steps - 1;
  const carried = await completedSteps(first.responseMessages, finishedSteps);
  // The steps go along only while the summary and the pinned messages stay whole beside them.
  const withSteps = carried.length > 0 ? trim([...messages, ...carried], true) : null;
  const keepsSteps = withSteps?.fits === true;
  const trimmed = withSteps && keepsSteps ? withSteps : trim(messages, false);
  write({ type: RETRY_MARKER_TYPE, data: { reason: "length", keepsSteps } } as UIMessageChunk);
  await ctx.onRecovery({
    kind: "length",
    tokensBefore: trimmed.before,
    tokensAfter: trimmed.after,
    reportedTokens: null,
    statedWindow: null,
  });
  ctx.observed.finished = false;
  // The retry's request is trimmed in memory: its count is not the stored view's.
  ctx.observed.trimmedInMemory = true;
  // The reply's steps go on from those it keeps, within the turn's step limit (at least one is
  // left: the cut step counted); a retry of the whole view starts over, with the whole limit, as
  // the reply keeps none of the first attempt's steps. Its stats count what both attempts used.
  ctx.observed.steps = keepsSteps ? finishedSteps : 0;
  ctx.observed.earlierUsage = first.usage;
  // The retry's own request, should the user stop it before a step ends: not the cut attempt's
  // last step (its context), nor the view before it was trimmed (its input).
  ctx.observed.lastStepUsage = undefined;
  ctx.observed.retryEstimatedTokens = Math.ceil((trimmed.after + ctx.frame.overheadTokens) * ratio);
  // A stopped retry's output is estimated from its own text: the first attempt's is counted.
  ctx.observed.streamedText = "";
  ctx.observed.streamedReasoning = "";
  const retry = await streamAttempt(ctx, signal, deadline, trimmed.messages, write, {
    maxSteps: maxSteps - ctx.observed.steps,
    pinned,
  });
  if (signal.aborted && !ctx.observed.finished) return;
  if (ctx.observed.stoppedFor) {
    write(quotaStoppedFinish(ctx, retry.finish));
    return;
  }
  if (cutShortByWindow(ctx)) throw new ContextOverflowError(ctx.budget.modelId);
  if (retry.finish) write(retry.finish);
}

/**
 * The messages of an attempt's `finished` steps, those before the one the window cut: each ended
 * in tool calls, so each is one assistant message and then its tools' results. None when the cut
 * step was the first, when the messages cannot be read, or when they are not shaped so.
 */
async function completedSteps(
  responseMessages: () => PromiseLike<ModelMessage[]>,
  finished: number,
): Promise<ModelMessage[]> {
  if (finished <= 0) return [];
  const all = await Promise.resolve()
    .then(responseMessages)
    .catch((): ModelMessage[] => []);
  const steps = all.slice(0, 2 * finished);
  const shaped =
    steps.length === 2 * finished &&
    steps.every((m, i) => m.role === (i % 2 === 0 ? "assistant" : "tool"));
  return shaped ? steps : [];
}

/**
 * One model call (with its tool loop) piped into the turn's stream; the finish chunk is returned,
 * not written, with the messages its steps produced.
 */
async function streamAttempt(
  ctx: AnswerContext,
  signal: AbortSignal,
  deadline: TurnDeadline,
  messages: ModelMessage[],
  write: (chunk: UIMessageChunk) => void,
  options: { maxSteps: number; pinned: Pinned },
): Promise<{
  finish: UIMessageChunk | undefined;
  /** What the attempt's steps used, as the provider reported it (none when it did not finish). */
  usage: LanguageModelUsage | undefined;
  /** The messages its steps produced (read only when asked: the AI SDK settles them lazily). */
  responseMessages: () => PromiseLike<ModelMessage[]>;
}> {
  const { frame, observed } = ctx;
  const settings = env().compaction;
  const result = streamModelCall({
    model: ctx.model,
    budget: ctx.budget,
    instructions: frame.instructions,
    tools: frame.tools,
    overheadTokens: frame.overheadTokens,
    toolOverheadTokens: frame.toolOverheadTokens,
    messages,
    maxSteps: options.maxSteps,
    stopBeforeStep: ctx.tokensLeft && quotaStop(ctx, ctx.tokensLeft),
    telemetry: env().aiTelemetry,
    proactive: settings.enabled,
    foldTrigger: ctx.compaction.trigger,
    keepRecentToolResults: settings.keepRecentToolResults,
    pinned: options.pinned,
    onRecovery: (event) => {
      // Calibration compares Fold's estimate with the provider's count of that same prompt.
      if (observed.steps === 0)
        observed.firstStepRecovered ??= { reportedTokens: event.reportedTokens };
      observed.trimmedInMemory = true;
      return ctx.onRecovery(event);
    },
    onTrim: () => {
      observed.trimmedInMemory = true;
    },
    onError: (error) =>
      log.warn(
        { err: error, chatId: ctx.chatId, modelId: ctx.budget.modelId },
        "model stream error",
      ),
    onMetric: metric,
    abortSignal: signal,
  });
  let usage: LanguageModelUsage | undefined;
  const ui = toUIMessageStream<ToolSet, FoldUIMessage>({
    stream: observeTurn(result.stream, ctx.now, observed).stream,
    tools: frame.tools,
    sendStart: false,
    onError: describeModelError,
    // A failed tool call reads as the model read it ("Could not resolve …"), not as a provider
    // failure: the tools throw errors worded for both, and the stored text goes back to the model.
    redactToolErrors: false,
    messageMetadata: ({ part }) => {
      if (part.type !== "finish") return undefined;
      usage = part.totalUsage;
      return replyMetadata(ctx, withEarlier(observed, usage), part.finishReason);
    },
  });
  let finish: UIMessageChunk | undefined;
  // A new request (a window-cut retry): its answer has not begun.
  deadline.touch(true);
  for await (const chunk of ui) {
    deadline.touch(awaitsAnswer(chunk.type));
    if (chunk.type === "text-delta")
      observed.streamedText = (observed.streamedText ?? "") + chunk.delta;
    else if (chunk.type === "reasoning-delta")
      observed.streamedReasoning = (observed.streamedReasoning ?? "") + chunk.delta;
    if (chunk.type === "finish") finish = chunk as UIMessageChunk;
    // An abort ends the stream; `answer` says how (a deadline's error, or a stopped reply).
    else if (chunk.type !== "abort") write(chunk as UIMessageChunk);
  }
  return { finish, usage, responseMessages: () => result.responseMessages };
}

/**
 * Whether the model's next chunk is the start of an answer to a request just sent: a step began
 * (its response opened) or ended (the next step's request goes out once its tools ran), or
 * reasoning began — OpenAI's reasoning models open it at once and then think without a word
 * for as long as they need, which is the wait for an answer, not a stream gone quiet.
 */
const awaitsAnswer = (type: UIMessageChunk["type"]) =>
  type === "start-step" || type === "finish-step" || type === "reasoning-start";

/** Fold's estimate of the first request, raw by content class and calibrated per class. */
function requestEstimate(ctx: AnswerContext) {
  const rawClasses = defaultEstimator.classTokensOfUIMessages(ctx.compaction.view);
  addClassTokens(rawClasses, ctx.frame.overheadClasses);
  return {
    estimatedRawTokens: classTotal(rawClasses),
    estimatedRawClasses: rawClasses,
    estimatedFrameTokens: ctx.frame.overheadTokens,
    estimatedTokens: applyRatio(rawClasses, ctx.budget.classRatios),
  };
}

/** How long after a failed read of the day's tokens the loop's check reads it once more. */
const QUOTA_REREAD_MS = 250;

/**
 * The loop's check before each further step: once the day's tokens are spent, it ends there.
 * A day that cannot be read (the database dropped the statement twice) ends it too: going on
 * unchecked, a tool loop would spend past the quota for as many steps as it is allowed.
 */
function quotaStop(ctx: AnswerContext, tokensLeft: () => Promise<boolean>) {
  const read = () =>
    tokensLeft().catch(async () => {
      await new Promise((resolve) => setTimeout(resolve, QUOTA_REREAD_MS));
      return tokensLeft();
    });
  return async () => {
    try {
      if (await read()) return false;
      ctx.observed.stoppedFor = "token_quota";
    } catch (error) {
      log.warn({ err: error }, "today's tokens could not be read between two steps; stopping");
      ctx.observed.stoppedFor = "quota_unchecked";
    }
    return true;
  };
}

/**
 * The finish of a loop that ended between two steps because today's tokens ran out: the
 * attempt's own (the provider reported every step's usage), marked stopped and why.
 */
function quotaStoppedFinish(ctx: AnswerContext, finish: UIMessageChunk | undefined) {
  ctx.observed.stopped = true;
  const why = { stopped: true, stoppedFor: ctx.observed.stoppedFor };
  const own = (finish as { messageMetadata?: MessageMetadata } | undefined)?.messageMetadata;
  const messageMetadata = { ...(own ?? stoppedMetadata(ctx)), ...why };
  return { ...(finish ?? { type: "finish" }), messageMetadata } as UIMessageChunk;
}

/**
 * A stopped reply's stats: the provider reports no usage for a request cut
 * off mid-stream, so input is Fold's estimate of the request and output the
 * estimate of what was written.
 */
function stoppedMetadata(ctx: AnswerContext): MessageMetadata {
  const { observed } = ctx;
  // The same estimate a finished reply records (and calibration would read), made once.
  observed.estimate ??= requestEstimate(ctx);
  const inputTokens = observed.retryEstimatedTokens ?? observed.estimate.estimatedTokens;
  const textTokens = defaultEstimator.countText(observed.streamedText ?? "");
  const reasoningTokens = defaultEstimator.countText(observed.streamedReasoning ?? "");
  const stoppedUsage = {
    inputTokens,
    outputTokens: textTokens + reasoningTokens,
    outputTokenDetails: { textTokens, reasoningTokens },
  } as LanguageModelUsage;
  return {
    stopped: true,
    stats: buildStats({
      model: ctx.budget.modelId,
      contextWindow: ctx.budget.window.contextWindow,
      totalUsage: withEarlier(observed, stoppedUsage),
      // Stopped before any step of its request ended: that request is its context.
      lastStepUsage: observed.lastStepUsage ?? stoppedUsage,
      steps: observed.steps,
      estimatedInputTokens: inputTokens,
      viewVersion: ctx.compaction.viewVersion,
      viewCapTokens: ctx.compaction.capTokens,
      viewTrimmed: observed.trimmedInMemory === true ? true : undefined,
      startedAt: ctx.startedAt,
      firstTokenAt: observed.firstTokenAt,
      ...finishedAndWriting(observed, ctx.now()),
      finishReason: "stopped",
    }),
    toolDurationsMs: observed.toolDurationsMs,
  };
}

/** When a reply ended, and how long its model wrote until then. */
const finishedAndWriting = (observed: TurnObservations, finishedAt: number) => ({
  finishedAt,
  writingMs: writingMsAt(observed),
});

/** A reply's usage with what an earlier attempt of it used (a window-cut retry's first). */
const withEarlier = (observed: TurnObservations, usage: LanguageModelUsage) =>
  observed.earlierUsage ? sumUsage(observed.earlierUsage, usage) : usage;

/** The reply's stats, computed once it is done so they never delay the first token. */
function replyMetadata(
  ctx: AnswerContext,
  totalUsage: LanguageModelUsage,
  finishReason: FinishReason,
): MessageMetadata {
  const { observed, compaction } = ctx;
  // Fold's own estimate of the first request, for calibration against the provider's count.
  observed.estimate ??= requestEstimate(ctx);
  return {
    stats: buildStats({
      model: ctx.budget.modelId,
      contextWindow: ctx.budget.window.contextWindow,
      totalUsage,
      lastStepUsage: observed.lastStepUsage,
      steps: observed.steps,
      estimatedInputTokens: observed.estimate.estimatedTokens,
      viewVersion: compaction.viewVersion,
      viewCapTokens: compaction.capTokens,
      viewTrimmed: observed.trimmedInMemory === true ? true : undefined,
      startedAt: ctx.startedAt,
      firstTokenAt: observed.firstTokenAt,
      ...finishedAndWriting(observed, ctx.now()),
      finishReason,
    }),
    toolDurationsMs: observed.toolDurationsMs,
  };
}

/** The turn ended because the window ran out, not because the answer was done. */
function cutShortByWindow(ctx: AnswerContext): boolean {
  const { observed } = ctx;
  return endsAtWindow(
    {
      finishReason: observed.finishReason ?? "",
      inputTokens: observed.lastStepUsage?.inputTokens ?? 0,
      outputTokens: observed.lastStepUsage?.outputTokens ?? 0,
      // A reply that stopped at the limit the turn asked for is not cut by the window.
      maxOutputTokens: outputLimitToSend(ctx.budget),
    },
    ctx.budget.window.contextWindow,
  );
}
