import { generateId, type UIMessageChunk } from "ai";
import { parseModelId } from "@/lib/ai/model-id";
import type { ModelBudget } from "@/lib/chat/budget";
import { type CompactOutcome, turnViewRules } from "@/lib/chat/compact";
import { savedPct, traceEndChunk, traceStartChunk } from "@/lib/compaction/trace";
import { editContext, stripTrace } from "@/lib/compaction/view";
import { defaultEstimator } from "@/lib/context/tokens";
import { detectTruncation, type Truncation, type TruncationInput } from "@/lib/context/truncation";
import type { Db } from "@/lib/db/client";
import { markCompactionDirty } from "@/lib/db/compaction-state";
import { recordCompactionEvent } from "@/lib/db/queries/compaction-events";
import { log, metric } from "@/lib/log";
import { pinnedIdsOf } from "@/lib/message/pins";
import { sentInRoom } from "@/lib/message/stats";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { inspectContextWindow, keepObservedWindow } from "@/lib/model-window/window";
import { describeChain, truncationFix } from "@/lib/model-window/window-label";
import type { TurnObservations } from "./observe";

export type TruncationCheck = {
  chatId: string;
  budget: ModelBudget;
  compaction: CompactOutcome;
  observed: TurnObservations;
  /** The stored messages the view was built from, unedited: the last request is rebuilt from them. */
  history: readonly FoldUIMessage[];
};

/**
 * Step 5b of a turn, between the answer and its finish chunk (issue 15): did the server cut
 * the first request silently? Then the count must not teach calibration (`observed.truncation`
 * tells calibrate.ts), the model's window becomes what the server kept (an observation the
 * chain uses next), the chat compacts durably before the next message, and the timeline and
 * Admin → Models say so, with the fix. Never fails the turn.
 */
export async function checkSilentTruncation(
  db: Db,
  turn: TruncationCheck,
  write: (chunk: UIMessageChunk) => void,
  now: () => number,
): Promise<Truncation | null> {
  const { observed, budget } = turn;
  const reportedTokens = observed.firstStepInputTokens;
  // A provider that refused the prompt did not cut it silently; recovery has handled it.
  if (!observed.estimate || !reportedTokens || observed.firstStepRecovered) return null;
  const truncation = detectTruncation({
    reportedTokens,
    ...observed.estimate,
    previous: previousRequest(turn) ?? undefined,
    countNoise: turn.budget.countNoise,
  });
  if (!truncation) return null;
  observed.truncation = truncation;
  try {
    await record(db, turn, truncation, write, now);
  } catch (error) {
    log.warn(
      { err: error, chatId: turn.chatId, modelId: budget.modelId },
      "recording a cut failed",
    );
  }
  return truncation;
}

async function record(
  db: Db,
  turn: TruncationCheck,
  truncation: Truncation,
  write: (chunk: UIMessageChunk) => void,
  now: () => number,
): Promise<void> {
  const { chatId, budget } = turn;
  const parsed = parseModelId(budget.modelId);
  if (!parsed) return;
  const { window, chain } = await inspectContextWindow(parsed.provider, parsed.model, db);
  const believed = describeChain(chain);
  const overridden = window.source === "override";
  await keepObservedWindow(db, parsed, chain, {
    contextWindow: truncation.keptTokens,
    sentTokens: truncation.sentTokens,
    chatId,
  });
  const n = (tokens: number) => tokens.toLocaleString("en-US");
  const kept = `The server kept only the last ${n(truncation.keptTokens)} of about ${n(truncation.sentTokens)} tokens Fold sent, without saying so`;
  // An admin's override wins over what Fold observes: saying Fold now uses less would be untrue.
  const note = overridden
    ? `${kept}: it runs ${budget.modelId} with a smaller context than the ${n(window.contextWindow)} tokens an admin's override in Admin → Models sets for it. Fold keeps the override, so long requests will be cut again: lower or remove it there, or run the model with a larger context. This chat compacts before your next message.`
    : `${kept}: it runs ${budget.modelId} with a smaller context than Fold assumed (${believed}). Fold now uses ${n(truncation.keptTokens)} for this model and compacts this chat before your next message. ${truncationFix(chain.detail?.server)}`;
  metric("context_window.truncated", {
    modelId: budget.modelId,
    chatId,
    kept: truncation.keptTokens,
    sent: truncation.sentTokens,
    rule: truncation.rule,
  });
  await markCompactionDirty(db, chatId);
  await recordCompactionEvent(db, {
    chatId,
    reason: "truncated",
    outcome: "skipped",
    tokensBefore: truncation.sentTokens,
    tokensAfter: truncation.keptTokens,
    messagesSummarized: 0,
    error: note,
  });
  const traceId = `truncated-${generateId()}`;
  const startedAt = now();
  write(
    traceStartChunk(traceId, {
      reason: "truncated",
      tokensBefore: truncation.sentTokens,
      messages: 0,
      startedAt,
    }),
  );
  write(
    traceEndChunk(traceId, {
      outcome: "skipped",
      reason: "truncated",
      tokensBefore: truncation.sentTokens,
      tokensAfter: truncation.keptTokens,
      savedPct: savedPct(truncation.sentTokens, truncation.keptTokens),
      messagesSummarized: 0,
      summarizerModel: null,
      durationMs: 0,
      summary: null,
      note,
    }),
  );
}

/**
 * The previous request of this chat, when this one is it plus what came after: the last
 * reply sent in this compaction version by this model, in one step (so its usage is the
 * count of exactly that request) and never trimmed in memory. What this request added is
 * Fold's estimate of it less its estimate of that one, rebuilt from the stored messages before
 * the reply through the same view edits (Stage 0 goes by size and position from the end only):
 * newer tool results push older ones past the few kept whole, so this request may send
 * placeholders for results the last one sent whole, and a count that grew by less than the
 * new messages is then no cut.
 */
function previousRequest(turn: TruncationCheck): TruncationInput["previous"] | null {
  const { view, viewVersion } = turn.compaction;
  const index = view.findLastIndex((m: FoldUIMessage) => m.metadata?.stats !== undefined);
  const stats = view[index]?.metadata?.stats;
  if (
    !stats ||
    // Sent at another window, its view was edited for another room: no measure of this one.
    !sentInRoom(stats, turn.budget.modelId, turn.budget.window.contextWindow) ||
    stats.viewVersion !== viewVersion ||
    stats.viewTrimmed ||
    stats.steps !== 1 ||
    stats.inputTokens <= 0
  ) {
    return null;
  }
  const stored = new Map(turn.history.map((m) => [m.id, m]));
  const prefix = view.slice(0, index);
  const sentBefore = editContext(
    stripTrace(prefix.map((m) => stored.get(m.id) ?? m)),
    turnViewRules(turn.budget.budget),
    defaultEstimator,
    pinnedIdsOf(turn.history),
  );
  const estimate = (messages: readonly FoldUIMessage[]) =>
    defaultEstimator.estimateUIMessages(messages, { ratio: turn.budget.classRatios });
  // Only messages sent differently now count besides the new ones (the edits return a message
  // they leave alone as it is).
  const changed = prefix.flatMap((m, i) => (sentBefore[i] === m ? [] : [i]));
  const shrunk =
    estimate(changed.flatMap((i) => sentBefore[i] ?? [])) -
    estimate(changed.flatMap((i) => prefix[i] ?? []));
  return {
    reportedTokens: stats.inputTokens,
    addedTokens: estimate(view.slice(index)) - shrunk,
  };
}
