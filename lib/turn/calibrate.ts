import { parseModelId } from "@/lib/ai/model-id";
import { type Calibration, calibrationSample } from "@/lib/context/calibration";
import type { ClassTokens } from "@/lib/context/content-class";
import { detectTruncation } from "@/lib/context/truncation";
import type { Db } from "@/lib/db/client";
import { recordCalibrationSample } from "@/lib/db/queries/calibration";
import { metric } from "@/lib/log";
import type { TurnObservations } from "./observe";

/**
 * After a turn: compare the provider's count of the first request with Fold's
 * estimate of it, log the error, and teach the model's calibration — unless the
 * count is one of a prompt the server cut silently, which says nothing about the
 * tokenizer (issue 15).
 */
export async function recordTurnUsage(
  db: Db,
  input: {
    modelId: string;
    realInputTokens: number | undefined;
    estimatedRawTokens: number;
    /** The same raw estimate split by content class: what calibration fits. */
    estimatedRawClasses: ClassTokens;
    /** Of the raw tokens, the request's frame (instructions, tool schemas): the same every turn. */
    estimatedFrameTokens: number;
    /** The calibrated estimate Fold used this turn (raw × the ratio it had). */
    estimatedTokens: number;
  },
): Promise<Calibration | null> {
  const parsed = parseModelId(input.modelId);
  if (!parsed || !input.realInputTokens) return null;
  if (detectTruncation({ reportedTokens: input.realInputTokens, ...input })) return null;
  metric("estimate.error_ratio", {
    modelId: input.modelId,
    ratio: Number((input.estimatedTokens / input.realInputTokens).toFixed(4)),
    real: input.realInputTokens,
    estimated: input.estimatedTokens,
  });
  const sample = calibrationSample(
    input.realInputTokens,
    input.estimatedRawClasses,
    input.estimatedFrameTokens,
  );
  if (sample === null) return null;
  return recordCalibrationSample(db, parsed.provider, parsed.model, sample);
}

/**
 * Step 7 of a turn: learn from the provider's count of the first request.
 * When recovery trimmed that request, only the count the provider reported
 * for the rejected (estimated) prompt compares with Fold's estimate.
 */
export async function calibrateFromTurn(
  db: Db,
  modelId: string,
  observed: TurnObservations,
): Promise<Calibration | null> {
  if (!observed.estimate || observed.truncation) return null;
  const realInputTokens = observed.firstStepRecovered
    ? (observed.firstStepRecovered.reportedTokens ?? undefined)
    : observed.firstStepInputTokens;
  return recordTurnUsage(db, { modelId, realInputTokens, ...observed.estimate });
}
