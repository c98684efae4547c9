import {
  createUIMessageStreamResponse,
  generateId,
  type LanguageModel,
  type ToolSet,
  type UIMessageChunk,
} from "ai";
import { describeModelError } from "@/lib/ai/errors";
import { chatFrameOverhead, chatRequestFrame, chatTurnFrame } from "@/lib/ai/request-frame";
import {
  type NextTurnSize,
  nextMessageTokens,
  startBackgroundCompaction,
} from "@/lib/chat/background-compact";
import { type ModelBudget, modelBudget } from "@/lib/chat/budget";
import type { HeldLease } from "@/lib/chat/lease";
import { chatRecall, cutInViewOf } from "@/lib/chat/recall";
import type { Db } from "@/lib/db/client";
import type { TurnStart } from "@/lib/db/queries/leases";
import { holdsChatStart } from "@/lib/db/queries/messages";
import type { Chat } from "@/lib/db/schema";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { AppError, databaseUnavailable } from "@/lib/errors";
import { type LiveBus, liveBus } from "@/lib/live/bus";
import { firstStopLook, listenForStop, type StopListener, takePendingStop } from "@/lib/live/stop";
import { endTurnStream, publishTurnStream } from "@/lib/live/streams";
import { log } from "@/lib/log";
import { type FoldUIMessage, rowToUIMessage } from "@/lib/message/ui-message";
import { answer } from "./answer";
import { browserCopy } from "./browser-copy";
import { calibrateFromTurn } from "./calibrate";
import { assertFitsAlone, compactForTurn } from "./compact-step";
import { holdTurnLease } from "./lease";
import { answeredNothing, noObservations, type TurnObservations } from "./observe";
import { assembleReply, persistReply } from "./persist";
import { AppliedRequestError, type PreparedTurn, prepareTurn } from "./prepare";
import { recordRecovery } from "./recovery-trace";
import { type TurnRequest, userMessageRow } from "./request";
import { checkSilentTruncation } from "./silent-truncation";

export type TurnDeps = {
  db: Db;
  /** Resolves `provider:model` to a model, or throws AppError(bad_request:model). */
  resolveModel: (modelId: string) => LanguageModel;
  defaultModelId: () => Promise<string>;
  now?: () => number;
  /** The tools the model may call; Fold's built-in ones unless a caller (a replay) brings its own. */
  tools?: ToolSet;
  /** How instances reach a running turn (stop, resume); the process's own unless a test brings one. */
  live?: LiveBus;
  /**
   * Returns the turn's message to the user's daily quota: called when the turn fails before
   * its model call (a message too long for the model's window is refused, not answered).
   */
  giveBack?: () => Promise<void>;
  /** Takes off the day the tokens the turn held while it ran: called once it ends, however. */
  releaseHeldTokens?: () => Promise<void>;
  /** Whether the user's day still has tokens: a tool loop stops once it has none. */
  tokensLeft?: () => Promise<boolean>;
};

/**
 * One chat turn, as a pipeline of named steps: lease → apply the request and
 * load (prepare) → Tier 1 (compact-step) → model call with Tier 2 and
 * recovery (answer) → persist → calibrate. The response stream opens before
 * Tier 1, so a compaction shows in the timeline while it runs; the reply is
 * stored even if the browser goes away mid-stream. While it runs, the turn
 * listens for Stop and publishes its stream, so any instance can stop it and
 * a reload anywhere can follow it (lib/live).
 */
export async function runTurn(
  deps: TurnDeps,
  chat: Chat,
  request: TurnRequest,
  /** The chat's lease when the caller took it with the chat (takeChatForTurn); else taken here. */
  held?: HeldLease,
  /** What the statement that took the lease read for a new message (takeChatForTurn). */
  start?: TurnStart,
): Promise<Response> {
  const { db } = deps;
  const modelId = request.modelId ?? chat.modelId ?? (await deps.defaultModelId());
  const model = deps.resolveModel(modelId);

  const live = deps.live ?? liveBus();
  const lease = held ?? (await holdTurnLease(db, chat.id));
  let prepared: PreparedTurn;
  let budget: ModelBudget | undefined;
  try {
    if (request.trigger === "submit-message") budget = await admitMessage(deps, modelId, request);
    prepared = await prepareTurn(db, chat, request, modelId, start);
  } catch (error) {
    await lease.release();
    if (!(error instanceof AppliedRequestError)) throw error;
    return unansweredAfterApplied(deps, chat.id, error);
  }

  const stop = new AbortController();
  const observed = noObservations();
  // A lease lost mid-turn (a stall past its term): another turn may hold the chat now. This
  // one stops, and stores nothing: its reply would land after the other turn's messages.
  const onLeaseLost = () => {
    observed.leaseLost = true;
    stop.abort();
  };
  if (lease.lost.aborted) onLeaseLost();
  else lease.lost.addEventListener("abort", onLeaseLost, { once: true });
  const answeringId = prepared.history.findLast((m) => m.role === "user")?.id;
  // What a stop names to reach this turn: its message, and the page's attempt (lib/live/stop.ts).
  const answering =
    answeringId === undefined
      ? undefined
      : { messageId: answeringId, ...(request.attemptId ? { attemptId: request.attemptId } : {}) };
  // Stopped by a stop published or left pending for it (lib/live/stop.ts).
  const unwatch = listenForStop(live, chat.id, answering, () => stop.abort());
  const assistantId = generateId();
  // Every chunk goes two ways: to the browser, and into the reply the server stores. The
  // reply is stored, calibration learned from it and the chat freed before the browser sees
  // the end of the stream, so a message sent right after it, or a reload, finds all of it
  // there (steps 6 and 7): the browser's copy holds back the finish chunk until then.
  const toBrowser = browserCopy();
  const assembly = assembleReply();
  const write = (chunk: UIMessageChunk) => {
    assembly.write(chunk);
    toBrowser.write(chunk);
  };
  void (async () => {
    try {
      write({ type: "start", messageId: assistantId });
      await streamTurn(
        deps,
        {
          ...prepared,
          modelId,
          model,
          budget,
          assistantId,
          observed,
          stopSignal: stop.signal,
          stopListener: unwatch,
        },
        write,
      );
    } catch (error) {
      observed.error ??= error;
      log.warn({ err: error, chatId: chat.id }, "turn failed");
      write({
        type: "error",
        errorText: error instanceof AppError ? error.message : describeModelError(error),
      });
    } finally {
      // Whatever happened above: the reply's end is what frees the chat.
      assembly.end();
    }
  })().catch((error: unknown) => {
    observed.error ??= error;
    log.error({ err: error, chatId: chat.id }, "turn failed while reporting its failure");
  });

  // The new message, when it is stored beside the model call: before the reply, and before the
  // chat is freed. Not stored, it was not answered: the turn still ends before the chat is
  // freed, and its message goes back to the day.
  const storedFirst = (prepared.stored ?? Promise.resolve()).then(
    () => true,
    (error: unknown) => {
      observed.error ??= error;
      observed.unstored = true;
      log.warn({ err: error, chatId: chat.id }, "storing the message failed");
      return false;
    },
  );
  let replyStored = false;
  const settled = storedFirst
    .then((stored) =>
      stored
        ? persistReply(db, chat.id, assembly, observed, lease)
        : assembly.reply.then(() => false),
    )
    .catch((error) => {
      log.error({ err: error, chatId: chat.id }, "storing the reply failed");
      return false;
    })
    .then((stored) => {
      replyStored = stored;
      return stored && !observed.stopped ? calibrateFromTurn(db, modelId, observed) : null;
    })
    .catch((error) => log.warn({ err: error, chatId: chat.id }, "recording usage failed"))
    .then(() => (answeredNothing(observed, replyStored) ? deps.giveBack?.() : undefined))
    .catch((error) => log.warn({ err: error, chatId: chat.id }, "returning the message failed"))
    // Its real tokens are on the day now (each provider call adds them as it ends): its estimate
    // comes off.
    .then(() => deps.releaseHeldTokens?.())
    .catch((error) => log.warn({ err: error, chatId: chat.id }, "releasing held tokens failed"))
    // Off the critical path: if the next turn would cross the trigger, a compaction starts
    // now, under its own lease, before this turn frees the chat (DESIGN §16). It never throws.
    // Not after a turn stopped before its model call: that stop may have been of this very
    // compaction. Nor after one whose message was not stored: it added nothing. Nor after one
    // the day's tokens stopped: a summarizer pass would be charged past them.
    .then(() =>
      observed.stoppedBeforeModel || observed.unstored || observed.stoppedFor !== undefined
        ? false
        : startBackgroundCompaction(
            { ...deps, live },
            chat.id,
            modelId,
            deps.tools,
            nextTurnSize(observed),
          ),
    )
    .finally(async () => {
      // This turn's stop listener only (another turn's on the chat's channel stays): left,
      // it would use up stops naming this turn's message that are meant for a later turn.
      await unwatch().catch(() => undefined);
      // The chat is another turn's now: its pending stop and live stream are that turn's. The
      // lease is still freed: given up while a renewal went unanswered, it may have come back
      // when that renewal landed late, and would hold the chat until it ran out (a release of a
      // token no longer on the row frees nothing).
      if (observed.leaseLost) {
        await lease.release();
        return;
      }
      // The reply is stored: a reload from here on reads it, not the live stream.
      await endTurnStream(live, chat.id);
      await lease.release();
      // A stop naming this turn's message that came once nobody listened is void: left
      // pending, it would stop the next Retry or Regenerate of that message. Looked for once the
      // chat is free: the stop route leaves one pending for as long as the chat is held.
      if (answering) await takePendingStop(live, chat.id, answering).catch(() => undefined);
    });

  void settled.then(() => toBrowser.end(observed.unsaved), toBrowser.fail);
  // The new message stored beside the model call: the reply is answered once it is stored. Not
  // stored, the request is refused (the browser puts the message back in its box); the turn
  // stops at once, showing and storing nothing, and frees the chat.
  const failed = await prepared.stored?.then(
    () => null,
    (error: unknown) => ({ error }),
  );
  if (failed) {
    stop.abort();
    void toBrowser.stream.cancel();
    // Answered once the chat is free again: a browser that reads it right after the refusal
    // finds no turn running.
    await settled.catch(() => undefined);
    const { error } = failed;
    return (error instanceof AppError ? error : databaseUnavailable(error)).toResponse();
  }
  return createUIMessageStreamResponse({
    stream: toBrowser.stream,
    // A copy of the wire stream, for readers that join late (a reload, another tab or instance).
    consumeSseStream: ({ stream: sse }) => {
      void publishTurnStream(live, chat.id, assistantId, sse);
    },
  });
}

/**
 * A turn whose request changed the stored history (its message stored, an edit or regenerate
 * applied) and then failed before it could start: answered as a turn that failed, not as one
 * that never came — the change stands, and a second try of the same request would apply it
 * again. The chat shows the message unanswered, with Retry; its day's message goes back, as
 * for any message no model answered.
 */
async function unansweredAfterApplied(
  deps: TurnDeps,
  chatId: string,
  error: AppliedRequestError,
): Promise<Response> {
  log.warn({ err: error.cause, chatId }, "turn failed after its request was applied");
  await Promise.resolve(deps.giveBack?.()).catch((cause: unknown) =>
    log.warn({ err: cause, chatId }, "returning the message failed"),
  );
  await Promise.resolve(deps.releaseHeldTokens?.()).catch((cause: unknown) =>
    log.warn({ err: cause, chatId }, "releasing held tokens failed"),
  );
  const why = isDatabaseUnavailable(error.cause)
    ? "Fold could not reach its database"
    : "something failed on Fold's side";
  const chunks: UIMessageChunk[] = [
    { type: "start", messageId: generateId() },
    {
      type: "error",
      errorText: `Your message is saved, but its reply could not start (${why}). Press Retry in a moment.`,
    },
  ];
  return createUIMessageStreamResponse({
    stream: new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    }),
  });
}

/**
 * The next turn's size as this one counted it, when its last request went out whole and its
 * count came back: the stored view then is that request plus the reply.
 */
function nextTurnSize(observed: TurnObservations): NextTurnSize | undefined {
  const usage = observed.lastStepUsage;
  const whole = observed.finished && !observed.stopped && !observed.trimmedInMemory;
  // A count of a prompt the server cut silently says nothing of the view's size.
  if (!observed.nextTurn || !whole || observed.truncation) return undefined;
  if (usage?.inputTokens === undefined || usage.outputTokens === undefined) return undefined;
  return {
    contextTokens: usage.inputTokens + usage.outputTokens,
    nextMessageTokens: observed.nextTurn.nextMessageTokens(),
    trigger: observed.nextTurn.trigger,
  };
}

/**
 * A new message (or an edit's text) that cannot fit the model's window on its own is refused
 * before anything is stored: its text goes back in the box. The model's budget it was checked
 * against is the turn's (the model call needs it anyway).
 */
async function admitMessage(
  deps: TurnDeps,
  modelId: string,
  request: Extract<TurnRequest, { trigger: "submit-message" }>,
): Promise<ModelBudget> {
  const now = deps.now ?? Date.now;
  const [budget, frame] = await Promise.all([
    modelBudget(deps.db, modelId),
    chatFrameOverhead(new Date(now()), deps.tools),
  ]);
  assertFitsAlone(rowToUIMessage(userMessageRow(request.message)), budget, frame.overheadTokens);
  return budget;
}

type TurnContext = PreparedTurn & {
  modelId: string;
  model: LanguageModel;
  /** The model's budget, when the turn resolved it before storing its message (admitMessage). */
  budget?: ModelBudget;
  assistantId: string;
  observed: TurnObservations;
  stopSignal: AbortSignal;
  /** The turn's stop listener: its first look for a stop left pending for it. */
  stopListener: Pick<StopListener, "looked">;
};

/** Tier 1, then the model call, written chunk by chunk into the turn's stream. */
async function streamTurn(
  deps: TurnDeps,
  turn: TurnContext,
  write: (chunk: UIMessageChunk) => void,
): Promise<void> {
  const { db } = deps;
  const now = deps.now ?? Date.now;
  const startedAt = now();
  const before = await beforeModelCall(deps, turn, startedAt, write).catch((error: unknown) => {
    turn.observed.failedBeforeModel = true;
    throw error;
  });
  if (!before) {
    // Stopped during Tier 1 or just after it: no model call, and no reply to store (persist.ts
    // keeps only the entry of a fold Tier 1 stored before the stop).
    turn.observed.stopped = true;
    turn.observed.stoppedBeforeModel = true;
    write({ type: "finish", messageMetadata: { stopped: true } });
    return;
  }
  const { frame, budget, compaction } = before;
  turn.observed.nextTurn = {
    trigger: budget.budget.trigger,
    nextMessageTokens: () =>
      nextMessageTokens(
        turn.history,
        budget.ratio,
        holdsChatStart(turn.history, {
          summary: turn.chat.contextSummary,
          watermark: turn.chat.summaryWatermark,
        }),
      ),
  };
  // The finish chunk waits until a silent cut is checked, so its trace is part of the reply.
  let finish: UIMessageChunk | undefined;
  const storedOk = (turn.stored ?? Promise.resolve()).then(
    () => true,
    () => false,
  );
  await answer(
    {
      chatId: turn.chat.id,
      model: turn.model,
      budget,
      frame,
      compaction,
      observed: turn.observed,
      startedAt,
      now,
      stopSignal: turn.stopSignal,
      tokensLeft: deps.tokensLeft,
      // What recovery records (a trace, the dirty flag, an event) follows the message it
      // answers: nothing for one that could not be stored (its turn is ending).
      onRecovery: async (event) => {
        if (await storedOk)
          await recordRecovery(db, turn.chat.id, event, write, now, budget.modelId);
      },
    },
    (chunk) => {
      if (chunk.type === "finish") finish = chunk;
      else write(chunk);
    },
  );
  const check = {
    chatId: turn.chat.id,
    budget,
    compaction,
    observed: turn.observed,
    history: turn.history,
  };
  if (await storedOk) await checkSilentTruncation(db, check, write, now);
  if (finish) write(finish);
}

/**
 * What the model call needs: the request's frame, the model's budget and Tier 1's outcome;
 * null when the user stopped the turn while Tier 1 compacted.
 */
async function beforeModelCall(
  deps: TurnDeps,
  turn: TurnContext,
  startedAt: number,
  write: (chunk: UIMessageChunk) => void,
) {
  const { db } = deps;
  const now = deps.now ?? Date.now;
  // Messages the view sends cut: recall reaches them as it reaches condensed ones (found only
  // when the model calls it).
  let view: FoldUIMessage[] = [];
  let cut: Set<string> | undefined;
  const cutInView = () => {
    cut ??= cutInViewOf(turn.history, view);
    return cut;
  };
  const [frame, budget] = await Promise.all([
    deps.tools
      ? chatRequestFrame(new Date(startedAt), deps.tools)
      : chatTurnFrame(new Date(startedAt), chatRecall(db, turn.chat.id, { cutInView })),
    turn.budget ?? modelBudget(db, turn.modelId),
  ]);
  const compaction = await compactForTurn(
    { db, resolveModel: deps.resolveModel, now },
    {
      chat: turn.chat,
      history: turn.history,
      positions: turn.positions,
      model: budget,
      overheadTokens: frame.overheadTokens,
      overheadClasses: frame.overheadClasses,
      traceId: `compact-${turn.assistantId}`,
      stored: turn.stored,
      stopSignal: turn.stopSignal,
    },
    write,
  );
  if (compaction) view = compaction.view;
  // A Stop sent right after the message may wait, pending, for the turn to look for it: the
  // look began before the turn prepared and is all but always done by now; it is waited for
  // (briefly) so that Stop reaches the turn before its provider does.
  await firstStopLook(turn.stopListener);
  // A Stop heard after Tier 1 last looked (its projection, a fold's commit) ends the turn here:
  // the AI SDK would still call the provider with the aborted signal.
  if (turn.stopSignal.aborted) return null;
  return compaction && { frame, budget, compaction };
}
