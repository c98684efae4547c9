import type { LanguageModelV4 } from "@ai-sdk/provider";
import {
  convertToModelMessages,
  createUIMessageStreamResponse,
  generateId,
  isStepCount,
  type LanguageModel,
  type ModelMessage,
  readUIMessageStream,
  streamText,
  toUIMessageStream,
  type UIMessageChunk,
  wrapLanguageModel,
} from "ai";
import { eq } from "drizzle-orm";
import { describeModelError } from "@/lib/ai/errors";
import { chatInstructions } from "@/lib/ai/prompts";
import { builtinTools } from "@/lib/ai/tools";
import { answerParts, RETRY_MARKER_TYPE } from "@/lib/chat/retry-marker";
import { DEFAULT_CHAT_TITLE } from "@/lib/chat/schemas";
import { buildStats, type MessageMetadata } from "@/lib/chat/stats";
import { titleFromMessage } from "@/lib/chat/title";
import { type FoldUIMessage, messageText, rowToUIMessage } from "@/lib/chat/ui-message";
import { compactChat } from "@/lib/compaction/compact";
import { ContextOverflowError } from "@/lib/compaction/overflow";
import {
  createRecoveryMiddleware,
  endsAtWindow,
  type RecoveryEvent,
} from "@/lib/compaction/recovery";
import { createTier2 } from "@/lib/compaction/tier2";
import { savedPct, traceEndChunk, traceStartChunk } from "@/lib/compaction/trace";
import { trimToFit } from "@/lib/compaction/trim";
import { estimateOverhead } from "@/lib/context/overhead";
import { recordTurnUsage } from "@/lib/context/record-usage";
import { defaultEstimator } from "@/lib/context/tokens";
import type { Db } from "@/lib/db/client";
import { markCompactionDirty } from "@/lib/db/compaction-state";
import { recordCompactionEvent } from "@/lib/db/queries/compaction-events";
import {
  acquireTurnLease,
  appendMessage,
  loadHistory,
  releaseTurnLease,
  renewTurnLease,
} from "@/lib/db/queries/messages";
import { type Chat, chat as chatTable } from "@/lib/db/schema";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { applyTurnRequest } from "./history";
import type { TurnRequest } from "./request";
import { emptyTrack, type TurnTrack, trackTurn } from "./track";

/** A turn streams for at most this long before its lease needs renewing. */
const TURN_LEASE_MS = 120_000;
const LEASE_RENEW_MS = 30_000;
/** Tool loops stop after this many model calls; Tier 2 keeps even the longest within the window. */
const MAX_STEPS = 50;

export type TurnDeps = {
  db: Db;
  /** Resolves `provider:model` to a model, or throws AppError(bad_request:model). */
  resolveModel: (modelId: string) => LanguageModel;
  defaultModelId: () => Promise<string>;
  now?: () => number;
};

/**
 * One chat turn: load → Tier 1 → stream → persist. The response stream opens
 * first, so a compaction shows in the timeline while it runs. The reply is
 * saved even if the browser goes away mid-stream; the lease says "a turn is
 * streaming" to every server instance until it ends.
 */
export async function runTurn(deps: TurnDeps, chat: Chat, request: TurnRequest): Promise<Response> {
  const { db } = deps;
  const modelId = request.modelId ?? chat.modelId ?? (await deps.defaultModelId());
  const model = deps.resolveModel(modelId);

  if (!(await acquireTurnLease(db, chat.id, TURN_LEASE_MS))) {
    throw new AppError(
      "conflict:turn",
      "A reply is already being written in this chat. Wait for it to finish.",
    );
  }
  let prepared: { history: FoldUIMessage[]; chat: Chat };
  try {
    await applyTurnRequest(db, chat, request);
    const history = (await loadHistory(db, chat.id)).map(rowToUIMessage);
    prepared = { history, chat: await updateChatAfterRequest(db, chat, modelId, history) };
  } catch (error) {
    await releaseTurnLease(db, chat.id);
    throw error;
  }

  const assistantId = generateId();
  const track = emptyTrack();
  const stream = new ReadableStream<UIMessageChunk>({
    start: async (controller) => {
      controller.enqueue({ type: "start", messageId: assistantId });
      try {
        await streamTurn(deps, { ...prepared, modelId, model, assistantId, track }, (chunk) =>
          controller.enqueue(chunk),
        );
      } catch (error) {
        track.error ??= error;
        log.warn({ err: error, chatId: chat.id }, "turn failed");
        controller.enqueue({
          type: "error",
          errorText: error instanceof AppError ? error.message : describeModelError(error),
        });
      }
      controller.close();
    },
  });

  // One branch for the browser, one the server reads to the end and stores.
  const [toBrowser, toStore] = stream.tee();
  const renew = setInterval(() => {
    renewTurnLease(db, chat.id, TURN_LEASE_MS).catch((error) =>
      log.warn({ err: error }, "lease renew failed"),
    );
  }, LEASE_RENEW_MS);
  void persistReply(db, chat.id, toStore, track)
    .then((stored) =>
      stored && track.estimate
        ? recordTurnUsage(db, {
            modelId,
            realInputTokens: track.firstStepRecovered
              ? (track.firstStepRecovered.reportedTokens ?? undefined)
              : track.firstStepInputTokens,
            ...track.estimate,
          })
        : null,
    )
    .catch((error) => log.warn({ err: error, chatId: chat.id }, "recording usage failed"))
    .finally(() => {
      clearInterval(renew);
      releaseTurnLease(db, chat.id).catch((error) =>
        log.error({ err: error, chatId: chat.id }, "lease release failed"),
      );
    });

  return createUIMessageStreamResponse({ stream: toBrowser });
}

type TurnContext = {
  chat: Chat;
  history: FoldUIMessage[];
  modelId: string;
  model: LanguageModel;
  assistantId: string;
  track: TurnTrack;
};

/** Tier 1, then the model call, written chunk by chunk into the turn's stream. */
async function streamTurn(
  deps: TurnDeps,
  turn: TurnContext,
  write: (chunk: UIMessageChunk) => void,
): Promise<void> {
  const { db } = deps;
  const now = deps.now ?? Date.now;
  const { track, modelId } = turn;
  const startedAt = now();
  const tools = builtinTools();
  const instructions = chatInstructions(new Date(startedAt));
  const overheadTokens = await estimateOverhead(defaultEstimator, instructions, tools);

  const traceId = `compact-${turn.assistantId}`;
  let traceOpen = false;
  const compaction = await compactChat(
    { db, resolveModel: deps.resolveModel, now },
    {
      chat: turn.chat,
      history: turn.history,
      modelId,
      overheadTokens,
      onSummarizeStart: ({ tokensBefore, messages, reason }) => {
        traceOpen = true;
        write(traceStartChunk(traceId, { reason, tokensBefore, messages, startedAt: now() }));
      },
    },
  );
  if (compaction.trace) {
    if (!traceOpen) {
      write(
        traceStartChunk(traceId, {
          reason: compaction.trace.reason,
          tokensBefore: compaction.trace.tokensBefore,
          messages: 0,
          startedAt: now(),
        }),
      );
    }
    write(traceEndChunk(traceId, compaction.trace));
  }
  if (!compaction.fits) {
    throw new AppError(
      "bad_request:too_long",
      `Your message is too long for ${modelId}'s context window (${compaction.contextWindow.toLocaleString("en-US")} tokens). Shorten it, or pick a model with a larger window.`,
    );
  }

  const toolOverheadTokens =
    overheadTokens - (await estimateOverhead(defaultEstimator, instructions, {}));
  const model = wrapLanguageModel({
    model: turn.model as LanguageModelV4,
    middleware: createRecoveryMiddleware({
      modelId,
      budget: compaction.budget,
      contextWindow: compaction.contextWindow,
      ratio: compaction.ratio,
      estimator: defaultEstimator,
      keepRecentToolResults: env().compaction.keepRecentToolResults,
      toolOverheadTokens,
      onRecovery: (event) => {
        // Calibration compares Fold's estimate with the provider's count of that same prompt.
        if (track.steps === 0)
          track.firstStepRecovered ??= { reportedTokens: event.reportedTokens };
        track.trimmedInMemory = true;
        return recordRecovery(db, turn.chat.id, event, write, now);
      },
    }),
  });
  const modelMessages = await convertToModelMessages(compaction.view, { tools });
  const keepRecentToolResults = env().compaction.keepRecentToolResults;

  /** One model call (with its tool loop) piped into the turn's stream; the finish chunk is returned, not written. */
  const attempt = async (messages: ModelMessage[]): Promise<UIMessageChunk | undefined> => {
    const result = streamText({
      model,
      instructions,
      messages,
      tools,
      stopWhen: isStepCount(MAX_STEPS),
      // Tier 2 is proactive compaction: off with COMPACTION_ENABLED=false; recovery stays on.
      prepareStep: env().compaction.enabled
        ? createTier2({
            budget: compaction.budget,
            ratio: compaction.ratio,
            overheadTokens,
            estimator: defaultEstimator,
            keepRecentToolResults,
            onTrim: () => {
              track.trimmedInMemory = true;
            },
          })
        : undefined,
      onError: ({ error }) =>
        log.warn({ err: error, chatId: turn.chat.id, modelId }, "model stream error"),
    });
    // The provider stream runs to the end even when nobody reads the response.
    void result.consumeStream();

    const tracked = trackTurn(result.stream, now, track).stream;
    const ui = toUIMessageStream<typeof tools, FoldUIMessage>({
      stream: tracked,
      tools,
      sendStart: false,
      onError: describeModelError,
      messageMetadata: ({ part }): MessageMetadata | undefined => {
        if (part.type !== "finish") return undefined;
        // Fold's own estimate of the first request, for calibration: computed once the
        // reply is done, so it never delays the first token.
        const raw = overheadTokens + defaultEstimator.estimateUIMessages(compaction.view);
        track.estimate ??= {
          estimatedRawTokens: raw,
          estimatedTokens: Math.ceil(raw * compaction.ratio),
        };
        return {
          stats: buildStats({
            model: modelId,
            totalUsage: part.totalUsage,
            lastStepUsage: track.lastStepUsage,
            steps: track.steps,
            estimatedInputTokens: track.estimate?.estimatedTokens,
            viewVersion: compaction.viewVersion,
            viewCapTokens: compaction.capTokens,
            viewTrimmed: track.trimmedInMemory === true ? true : undefined,
            startedAt,
            firstTokenAt: track.firstTokenAt,
            finishedAt: now(),
            finishReason: part.finishReason,
          }),
          toolDurationsMs: track.toolDurationsMs,
        };
      },
    });
    let finish: UIMessageChunk | undefined;
    for await (const chunk of ui) {
      if (chunk.type === "finish") finish = chunk as UIMessageChunk;
      else write(chunk as UIMessageChunk);
    }
    return finish;
  };

  const finish = await attempt(modelMessages);
  if (!cutShortByWindowAtEnd(track, compaction.contextWindow)) {
    if (finish) write(finish);
    return;
  }

  // The window cut the reply short: not an answer. Mark where the retry starts, trim in
  // memory, and answer again once (DESIGN §10); the chat compacts durably next turn.
  write({ type: RETRY_MARKER_TYPE, data: { reason: "length" } } as UIMessageChunk);
  const trimmed = trimToFit(modelMessages, {
    limitTokens: Math.max(
      0,
      Math.floor(compaction.budget.target / compaction.ratio) - overheadTokens,
    ),
    keepRecentToolResults: Math.max(2, Math.floor(keepRecentToolResults / 2)),
    estimate: (list) => defaultEstimator.estimateModelMessages(list),
    force: true,
  });
  await recordRecovery(
    db,
    turn.chat.id,
    {
      kind: "length",
      tokensBefore: trimmed.before,
      tokensAfter: trimmed.after,
      reportedTokens: null,
    },
    write,
    now,
  );
  track.finished = false;
  track.steps = 0;
  const retryFinish = await attempt(trimmed.messages);
  if (cutShortByWindowAtEnd(track, compaction.contextWindow)) {
    throw new ContextOverflowError(modelId);
  }
  if (retryFinish) write(retryFinish);
}

/** The turn ended because the window ran out, not because the answer was done. */
function cutShortByWindowAtEnd(track: TurnTrack, contextWindow: number): boolean {
  return endsAtWindow(
    {
      finishReason: track.finishReason ?? "",
      inputTokens: track.lastStepUsage?.inputTokens ?? 0,
      outputTokens: track.lastStepUsage?.outputTokens ?? 0,
    },
    contextWindow,
  );
}

/** Recovery happened: the chat is dirty (next turn compacts durably), the timeline shows it. */
async function recordRecovery(
  db: Db,
  chatId: string,
  event: RecoveryEvent,
  write: (chunk: UIMessageChunk) => void,
  now: () => number,
): Promise<void> {
  const traceId = `recover-${generateId()}`;
  const reason = event.kind;
  write(
    traceStartChunk(traceId, {
      reason,
      tokensBefore: event.tokensBefore,
      messages: 0,
      startedAt: now(),
    }),
  );
  write(
    traceEndChunk(traceId, {
      outcome: "trimmed",
      reason,
      tokensBefore: event.tokensBefore,
      tokensAfter: event.tokensAfter,
      savedPct: savedPct(event.tokensBefore, event.tokensAfter),
      messagesSummarized: 0,
      summarizerModel: null,
      durationMs: 0,
      summary: null,
      note:
        event.reportedTokens !== null
          ? `The provider counted ${event.reportedTokens.toLocaleString("en-US")} tokens; the request was trimmed in memory and retried once.`
          : "The request was trimmed in memory and retried once.",
    }),
  );
  await markCompactionDirty(db, chatId);
  await recordCompactionEvent(db, {
    chatId,
    reason,
    outcome: "skipped",
    tokensBefore: event.tokensBefore,
    tokensAfter: event.tokensAfter,
    messagesSummarized: 0,
    error: "recovered: trimmed in memory and retried; the next turn compacts durably",
  });
}

async function updateChatAfterRequest(
  db: Db,
  chat: Chat,
  modelId: string,
  history: FoldUIMessage[],
): Promise<Chat> {
  const patch: { modelId?: string; title?: string; updatedAt: Date } = { updatedAt: new Date() };
  if (chat.modelId !== modelId) patch.modelId = modelId;
  const firstUser = history.find((m) => m.role === "user");
  if (chat.title === DEFAULT_CHAT_TITLE && firstUser)
    patch.title = titleFromMessage(messageText(firstUser));
  const [row] = await db.update(chatTable).set(patch).where(eq(chatTable.id, chat.id)).returning();
  return row ?? chat;
}

/**
 * Stores the finished reply. A reply that failed or was cut off by an error is
 * not stored as an answer: the user's message stays, and Retry asks again.
 */
async function persistReply(
  db: Db,
  chatId: string,
  stream: ReadableStream<UIMessageChunk>,
  track: TurnTrack,
): Promise<boolean> {
  let reply: FoldUIMessage | undefined;
  try {
    for await (const state of readUIMessageStream<FoldUIMessage>({
      stream,
      terminateOnError: false,
      onError: () => undefined,
    })) {
      reply = state;
    }
    if (track.error || !track.finished || !reply) {
      log.warn({ chatId, err: track.error }, "turn ended without a complete reply; not stored");
      return false;
    }
    await appendMessage(db, chatId, {
      id: reply.id,
      role: "assistant",
      parts: answerParts(reply.parts),
      metadata: reply.metadata ?? null,
    });
    return true;
  } catch (error) {
    log.error({ err: error, chatId }, "storing the reply failed");
    return false;
  }
}
