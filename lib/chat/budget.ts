import { parseModelId } from "@/lib/ai/model-id";
import { type Budget, computeBudget } from "@/lib/context/budget";
import { classRatios, countNoise, effectiveRatio } from "@/lib/context/calibration";
import type { ClassRatios } from "@/lib/context/content-class";
import type { Db } from "@/lib/db/client";
import { getCalibration } from "@/lib/db/queries/calibration";
import { env } from "@/lib/env";
import {
  type ContextWindow,
  DEFAULT_CONTEXT_WINDOW,
  resolveContextWindow,
} from "@/lib/model-window/window";

/**
 * Everything compaction needs to know about one chat model, resolved once per
 * request: its window, the one Budget computed from it and the configured
 * ratios, and its calibrated ratio of real to estimated tokens. The ring, Tier 1,
 * Tier 2 and recovery all receive this same object.
 */
export type ModelBudget = {
  modelId: string;
  window: ContextWindow;
  budget: Budget;
  /** Multiplier from Fold's raw estimate to this model's count, overall (budget room). */
  ratio: number;
  /** The same per content class: what estimates of messages are multiplied by. */
  classRatios: ClassRatios;
  calibrationSamples: number;
  /** How far the model's count has lately missed the calibrated estimate, as a share (countNoise). */
  countNoise?: number;
};

export async function modelBudget(db: Db, modelId: string): Promise<ModelBudget> {
  const parsed = parseModelId(modelId);
  const [window, calibration] = parsed
    ? await Promise.all([
        resolveContextWindow(parsed.provider, parsed.model, db),
        getCalibration(db, parsed.provider, parsed.model),
      ])
    : [
        {
          contextWindow: DEFAULT_CONTEXT_WINDOW,
          maxOutputTokens: null,
          source: "default" as const,
        },
        null,
      ];
  return {
    modelId,
    window,
    budget: computeBudget(window, env().compaction),
    ratio: effectiveRatio(calibration),
    classRatios: classRatios(calibration),
    calibrationSamples: calibration?.samples ?? 0,
    countNoise: countNoise(calibration),
  };
}
