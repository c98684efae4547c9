import { parseModelId } from "@/lib/ai/model-id";
import { chatRequestFrame } from "@/lib/ai/request-frame";
import { foldTrigger, projectNextTurn } from "@/lib/compaction/projection";
import { summaryMessage } from "@/lib/compaction/view";
import { breakdown } from "@/lib/context/breakdown";
import { applyRatio, defaultEstimator } from "@/lib/context/tokens";
import type { Db } from "@/lib/db/client";
import { isCompacting } from "@/lib/db/queries/chats";
import { holdsChatStart, loadKeyedHistory, loadTurnHistory } from "@/lib/db/queries/messages";
import type { Chat } from "@/lib/db/schema";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { isPinnedByUser, pinnedIdsOf } from "@/lib/message/pins";
import { rowToUIMessage } from "@/lib/message/ui-message";
import { describeWindow } from "@/lib/model-window/window-label";
import { nextMessageTokens } from "./background-compact";
import { modelBudget } from "./budget";
import { stateOf } from "./compact";

/**
 * GET /api/chats/:id/context — everything the context ring shows, projected
 * exactly as the next turn's Tier 1 will: the summary in place of what it
 * covers, real usage only when it describes the current compaction version.
 */
export async function chatContext(db: Db, chat: Chat, modelId: string) {
  if (!parseModelId(modelId))
    throw new AppError("bad_request:model", "modelId must look like provider:model");
  const settings = env().compaction;
  // Only what the next turn sends is read: the summary covers the rest (see loadTurnHistory).
  const [model, rows, frame] = await Promise.all([
    modelBudget(db, modelId),
    settings.enabled
      ? loadTurnHistory(db, chat.id, {
          summary: chat.contextSummary,
          watermark: chat.summaryWatermark,
        })
      : loadKeyedHistory(db, chat.id),
    chatRequestFrame(new Date()),
  ]);
  const { budget, ratio, window } = model;
  // With compaction off too, a turn sends the summary already there and what follows it.
  const state = stateOf(chat);
  const history = rows.map(rowToUIMessage);
  const pinnedIds = pinnedIdsOf(history);
  const projectionInput = {
    history,
    pinnedIds,
    state,
    budget,
    overheadTokens: frame.overheadTokens,
    overheadClasses: frame.overheadClasses,
    ratio,
    classRatios: model.classRatios,
    modelId,
    estimator: defaultEstimator,
    keepRecentToolResults: settings.keepRecentToolResults,
    compactionOff: !settings.enabled,
  };
  const { view, projectedTokens } = projectNextTurn(projectionInput);
  // Where the next turn folds: above the budget's trigger when a fold cannot reach the target,
  // for a next message like the chat's recent ones (as the background compaction expects).
  const trigger = settings.enabled
    ? foldTrigger(
        projectionInput,
        view,
        nextMessageTokens(history, ratio, holdsChatStart(rows, state)),
      )
    : budget.trigger;
  const summaryTokens = view.summary
    ? defaultEstimator.estimateUIMessages([summaryMessage(view.summary)], {
        ratio: model.classRatios,
      })
    : 0;
  // Unpinned messages kept until a summary tells them count as messages, not as pinned.
  const pinnedInView = view.messages.filter((m) => isPinnedByUser(m.metadata));
  const projection = {
    projectedTokens,
    overheadTokens: applyRatio(frame.overheadClasses, model.classRatios),
    summaryTokens,
    pinnedTokens: pinnedInView.length
      ? Math.ceil(defaultEstimator.estimateUIMessages(pinnedInView) * ratio)
      : 0,
  };
  return {
    modelId,
    contextWindow: window.contextWindow,
    maxOutputTokens: window.maxOutputTokens,
    source: window.source,
    /** The window in use and who said it: "Ollama, loaded at 4,096 — the model supports 131,072". */
    windowLabel: describeWindow(window),
    projectedTokens,
    calibration: { ratio, samples: model.calibrationSamples },
    budget: {
      inputBudget: budget.inputBudget,
      trigger,
      /** The chat folds later than the budget's trigger (projection.ts, foldTrigger). */
      triggerRaised: trigger > budget.trigger,
      target: budget.target,
      outputReserve: budget.outputReserve,
    },
    breakdown: breakdown(projection, budget),
    summarizedMessages: summarizedMessages(rows, state),
    compactionEnabled: settings.enabled,
    /** A background compaction is folding the chat right now (its trace streams live). */
    compacting: isCompacting(chat),
    /** The next turn compacts first (after an overflow, a cut-short reply or an edit). */
    compactsNext: settings.enabled && (state.dirty || projectedTokens >= trigger),
  };
}

export type ChatContext = Awaited<ReturnType<typeof chatContext>>;

/**
 * How many messages the summary stands for: those up to its watermark. Stored seqs run
 * 0..n−1 (history is only ever cut at its tail), so the watermark's seq counts them. (The rows
 * are not one run to count: pinned messages the summary covers are read before the rest.)
 */
function summarizedMessages(
  rows: readonly { id: string; seq: number }[],
  state: { summary: string | null; watermark: string | null },
): number {
  if (!state.summary || !state.watermark) return 0;
  const watermark = rows.find((row) => row.id === state.watermark);
  return watermark ? watermark.seq + 1 : 0;
}
