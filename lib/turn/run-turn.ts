import {
  convertToModelMessages,
  createUIMessageStream,
  createUIMessageStreamResponse,
  generateId,
  isStepCount,
  type LanguageModel,
  readUIMessageStream,
  streamText,
  type ToolSet,
  toUIMessageStream,
  type UIMessageChunk,
} from "ai";
import { eq } from "drizzle-orm";
import { describeModelError } from "@/lib/ai/errors";
import { parseModelId } from "@/lib/ai/model-id";
import { chatInstructions } from "@/lib/ai/prompts";
import { builtinTools } from "@/lib/ai/tools";
import { DEFAULT_CHAT_TITLE } from "@/lib/chat/schemas";
import { buildStats, type MessageMetadata } from "@/lib/chat/stats";
import { titleFromMessage } from "@/lib/chat/title";
import { type FoldUIMessage, messageText, rowToUIMessage } from "@/lib/chat/ui-message";
import { effectiveRatio } from "@/lib/context/calibration";
import { estimateOverhead } from "@/lib/context/overhead";
import { recordTurnUsage } from "@/lib/context/record-usage";
import { defaultEstimator } from "@/lib/context/tokens";
import type { Db } from "@/lib/db/client";
import { getCalibration } from "@/lib/db/queries/calibration";
import {
  acquireTurnLease,
  appendMessage,
  loadHistory,
  releaseTurnLease,
  renewTurnLease,
} from "@/lib/db/queries/messages";
import { type Chat, chat as chatTable } from "@/lib/db/schema";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { applyTurnRequest } from "./history";
import type { TurnRequest } from "./request";
import { trackTurn } from "./track";

/** A turn streams for at most this long before its lease needs renewing. */
const TURN_LEASE_MS = 120_000;
const LEASE_RENEW_MS = 30_000;
/** Tool loops stop after this many model calls. */
const MAX_STEPS = 8;

export type TurnDeps = {
  db: Db;
  /** Resolves `provider:model` to a model, or throws AppError(bad_request:model). */
  resolveModel: (modelId: string) => LanguageModel;
  defaultModelId: () => Promise<string>;
  now?: () => number;
};

/**
 * One chat turn: load → (compaction lands here) → stream → persist.
 * The reply is saved even if the browser goes away mid-stream; the lease says
 * "a turn is streaming" to every server instance until it ends.
 */
export async function runTurn(deps: TurnDeps, chat: Chat, request: TurnRequest): Promise<Response> {
  const { db } = deps;
  const now = deps.now ?? Date.now;
  const modelId = request.modelId ?? chat.modelId ?? (await deps.defaultModelId());
  const model = deps.resolveModel(modelId);

  if (!(await acquireTurnLease(db, chat.id, TURN_LEASE_MS))) {
    throw new AppError(
      "conflict:turn",
      "A reply is already being written in this chat. Wait for it to finish.",
    );
  }
  let handedOff = false;
  try {
    await applyTurnRequest(db, chat, request);
    const history = (await loadHistory(db, chat.id)).map(rowToUIMessage);
    await updateChatAfterRequest(db, chat, modelId, history);

    const startedAt = now();
    const tools = builtinTools();
    const instructions = chatInstructions(new Date(startedAt));
    const estimate = await estimatePrompt(db, modelId, instructions, tools, history);
    const result = streamText({
      model,
      instructions,
      messages: await convertToModelMessages(history, { tools }),
      tools,
      stopWhen: isStepCount(MAX_STEPS),
      onError: ({ error }) =>
        log.warn({ err: error, chatId: chat.id, modelId }, "model stream error"),
    });
    // The provider stream runs to the end even when nobody reads the response.
    void result.consumeStream();

    const { stream, track } = trackTurn(result.stream, now);
    const assistantId = generateId();
    const uiStream = toUIMessageStream<typeof tools, FoldUIMessage>({
      stream,
      tools,
      generateMessageId: () => assistantId,
      onError: describeModelError,
      messageMetadata: ({ part }): MessageMetadata | undefined => {
        if (part.type !== "finish") return undefined;
        return {
          stats: buildStats({
            model: modelId,
            totalUsage: part.totalUsage,
            lastStepUsage: track.lastStepUsage,
            steps: track.steps,
            estimatedInputTokens: estimate.calibrated,
            startedAt,
            firstTokenAt: track.firstTokenAt,
            finishedAt: now(),
            finishReason: part.finishReason,
          }),
          toolDurationsMs: track.toolDurationsMs,
        };
      },
    });
    // One branch for the browser, one the server reads to the end and stores.
    const [toBrowser, toStore] = uiStream.tee();
    const renew = setInterval(() => {
      renewTurnLease(db, chat.id, TURN_LEASE_MS).catch((error) =>
        log.warn({ err: error }, "lease renew failed"),
      );
    }, LEASE_RENEW_MS);
    handedOff = true;
    void persistReply(db, chat.id, toStore, track)
      .then((stored) =>
        stored
          ? recordTurnUsage(db, {
              modelId,
              realInputTokens: track.firstStepInputTokens,
              estimatedRawTokens: estimate.raw,
              estimatedTokens: estimate.calibrated,
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

    return createUIMessageStreamResponse({
      stream: createUIMessageStream<FoldUIMessage>({
        execute: ({ writer }) => writer.merge(toBrowser),
        onError: describeModelError,
      }),
    });
  } finally {
    if (!handedOff) await releaseTurnLease(db, chat.id);
  }
}

async function updateChatAfterRequest(
  db: Db,
  chat: Chat,
  modelId: string,
  history: FoldUIMessage[],
) {
  const patch: { modelId?: string; title?: string; updatedAt: Date } = { updatedAt: new Date() };
  if (chat.modelId !== modelId) patch.modelId = modelId;
  const firstUser = history.find((m) => m.role === "user");
  if (chat.title === DEFAULT_CHAT_TITLE && firstUser)
    patch.title = titleFromMessage(messageText(firstUser));
  await db.update(chatTable).set(patch).where(eq(chatTable.id, chat.id));
}

/**
 * Stores the finished reply. A reply that failed or was cut off by an error is
 * not stored as an answer: the user's message stays, and Retry asks again.
 */
async function persistReply(
  db: Db,
  chatId: string,
  stream: ReadableStream<UIMessageChunk>,
  track: ReturnType<typeof trackTurn>["track"],
): Promise<boolean> {
  let reply: FoldUIMessage | undefined;
  try {
    for await (const state of readUIMessageStream<FoldUIMessage>({
      stream: stream as ReadableStream<UIMessageChunk>,
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
      parts: reply.parts,
      metadata: reply.metadata ?? null,
    });
    return true;
  } catch (error) {
    log.error({ err: error, chatId }, "storing the reply failed");
    return false;
  }
}

/** Fold's estimate of the first request, raw and calibrated, to learn from the provider's real count. */
async function estimatePrompt(
  db: Db,
  modelId: string,
  instructions: string,
  tools: ToolSet,
  history: FoldUIMessage[],
): Promise<{ raw: number; calibrated: number }> {
  const parsed = parseModelId(modelId);
  const calibration = parsed ? await getCalibration(db, parsed.provider, parsed.model) : null;
  const raw =
    (await estimateOverhead(defaultEstimator, instructions, tools)) +
    defaultEstimator.estimateUIMessages(history);
  return { raw, calibrated: Math.ceil(raw * effectiveRatio(calibration)) };
}
