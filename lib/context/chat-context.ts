import { parseModelId } from "@/lib/ai/model-id";
import { chatInstructions } from "@/lib/ai/prompts";
import { builtinTools } from "@/lib/ai/tools";
import { rowToUIMessage } from "@/lib/chat/ui-message";
import { stateOf } from "@/lib/compaction/compact";
import { projectNextTurn } from "@/lib/compaction/tier1";
import { summaryMessage } from "@/lib/compaction/view";
import type { Db } from "@/lib/db/client";
import { getCalibration } from "@/lib/db/queries/calibration";
import { loadHistory } from "@/lib/db/queries/messages";
import type { Chat } from "@/lib/db/schema";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { computeBudget, ratiosFromEnv } from "./budget";
import { effectiveRatio } from "./calibration";
import { estimateOverhead } from "./overhead";
import { defaultEstimator } from "./tokens";
import { breakdown } from "./usage";
import { resolveContextWindow } from "./window";

/**
 * GET /api/chats/:id/context — everything the context ring shows, projected
 * exactly as the next turn's Tier 1 will: the summary in place of what it
 * covers, real usage only when it describes the current compaction version.
 */
export async function chatContext(db: Db, chat: Chat, modelId: string) {
  const parsed = parseModelId(modelId);
  if (!parsed) throw new AppError("bad_request:model", "modelId must look like provider:model");
  const [window, calibration, rows] = await Promise.all([
    resolveContextWindow(parsed.provider, parsed.model),
    getCalibration(db, parsed.provider, parsed.model),
    loadHistory(db, chat.id),
  ]);
  const ratio = effectiveRatio(calibration);
  const overheadTokens = await estimateOverhead(
    defaultEstimator,
    chatInstructions(new Date()),
    builtinTools(),
  );
  const budget = computeBudget(window, ratiosFromEnv(env().compaction));
  // With compaction off, turns send the whole stored history: project that, not the summary view.
  const state = env().compaction.enabled
    ? stateOf(chat)
    : { summary: null, watermark: null, dirty: false, version: chat.version };
  const { view, projectedTokens } = projectNextTurn({
    history: rows.map(rowToUIMessage),
    state,
    budget,
    overheadTokens,
    ratio,
    modelId,
    estimator: defaultEstimator,
    keepRecentToolResults: env().compaction.keepRecentToolResults,
  });
  const summaryTokens = view.summary
    ? Math.ceil(defaultEstimator.estimateUIMessages([summaryMessage(view.summary)]) * ratio)
    : 0;
  const projection = {
    projectedTokens,
    overheadTokens: Math.ceil(overheadTokens * ratio),
    summaryTokens,
  };
  return {
    modelId,
    contextWindow: window.contextWindow,
    maxOutputTokens: window.maxOutputTokens,
    source: window.source,
    projectedTokens,
    calibration: { ratio, samples: calibration?.samples ?? 0 },
    budget: {
      inputBudget: budget.inputBudget,
      trigger: budget.trigger,
      target: budget.target,
      outputReserve: budget.outputReserve,
    },
    breakdown: breakdown(projection, budget),
    summarizedMessages: rows.length - view.after.length,
    compactionEnabled: env().compaction.enabled,
    /** The next turn compacts first (after an overflow, a cut-short reply or an edit). */
    compactsNext: env().compaction.enabled && (state.dirty || projectedTokens >= budget.trigger),
  };
}

export type ChatContext = Awaited<ReturnType<typeof chatContext>>;
