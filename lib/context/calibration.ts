/**
 * Self-calibration (DESIGN §5): each turn compares Fold's raw estimate of the
 * prompt with the provider's real count and folds the ratio into a moving
 * average per model, so a model whose tokenizer counts differently (Claude,
 * Gemini, Llama) is learned rather than guessed.
 */

/** With no samples yet, assume the provider counts up to 15 % more than o200k. */
export const COLD_START_RATIO = 1.15;
/** Weight of a new sample: fast enough to converge in a few turns, steady against one odd turn. */
export const CALIBRATION_EMA_ALPHA = 0.5;
/** Samples outside this band say more about a broken turn than about the tokenizer. */
const SAMPLE_MIN = 0.3;
const SAMPLE_MAX = 3;
/** Prompts this small are dominated by fixed overheads the estimator does not model. */
export const CALIBRATION_MIN_TOKENS = 64;

export type Calibration = { ratio: number; samples: number };

/** The multiplier to apply to a raw estimate for this model. */
export function effectiveRatio(calibration: Calibration | null | undefined): number {
  return calibration && calibration.samples > 0 ? calibration.ratio : COLD_START_RATIO;
}

/** The ratio sample a turn yields, or null when it should not count. */
export function calibrationSample(realTokens: number, estimatedRawTokens: number): number | null {
  if (estimatedRawTokens < CALIBRATION_MIN_TOKENS || realTokens <= 0) return null;
  const sample = realTokens / estimatedRawTokens;
  return sample >= SAMPLE_MIN && sample <= SAMPLE_MAX ? sample : null;
}

/** Exponential moving average; the first sample replaces the cold-start guess outright. */
export function nextCalibration(
  previous: Calibration | null | undefined,
  sample: number,
): Calibration {
  if (!previous || previous.samples === 0) return { ratio: sample, samples: 1 };
  return {
    ratio: previous.ratio + CALIBRATION_EMA_ALPHA * (sample - previous.ratio),
    samples: previous.samples + 1,
  };
}
