/**
 * Self-calibration (DESIGN §5, issue 13): each turn compares Fold's raw
 * estimate of the prompt, split by content class, with the provider's real
 * count, and refines one ratio per class for that model. Real tokenizers skew
 * by content (Qwen and Gemma split numbers into digits, Claude spends up to 3×
 * on Indic scripts), so one ratio per model would be right only for the mix it
 * last saw.
 *
 * The fit is a small Kalman filter (recursive least squares with a prior) on
 * the turn's class mix: y = real / raw ≈ Σ ratio[c] · share[c]. A turn moves
 * the classes it contains, in proportion to their share and how unsure we are
 * of them; classes it lacks keep their (conservative) cold priors.
 */
import { type ClassRatios, type ClassTokens, CONTENT_CLASSES, classTotal } from "./content-class";

/**
 * What a raw o200k count is multiplied by before any sample, per class: the
 * highest ratio measured for that class across Qwen 3, Llama 3, DeepSeek V3,
 * Gemma 3 and Claude tokenizers (tests/bench/estimator.ts), so a first turn
 * over-estimates rather than under-estimates whichever family it meets.
 * `frame` is the per-message framing of those families' chat templates
 * (tests/bench/estimator-priors.ts); the once-per-request framing is counted
 * apart (REQUEST_OVERHEAD_TOKENS in overhead.ts), so it no longer inflates it.
 */
export const COLD_CLASS_RATIOS: Readonly<ClassRatios> = {
  prose: 1.1,
  code: 1.25,
  json: 1.25,
  cjk: 1.75,
  digits: 1.65,
  script: 2.7,
  indic: 3.1,
  frame: 1.25,
};
/** How far each cold prior may be off (one standard deviation): wide where families disagree. */
const PRIOR_SD: Readonly<ClassRatios> = {
  prose: 0.1,
  code: 0.15,
  json: 0.2,
  cjk: 0.4,
  digits: 0.4,
  script: 1,
  indic: 1.2,
  frame: 0.6,
};
/** Noise of one turn's overall ratio around the per-class model (≈ 1.5 %). */
const SAMPLE_NOISE_SD = 0.015;
/** Drift allowed per turn, so an old fit keeps learning (a model behind an alias can change). */
const DRIFT_SD = 0.005;
/** No class ratio is learned outside this band; a sample outside it is a broken turn. */
const RATIO_MIN = 0.3;
const RATIO_MAX = 4;
/** The overall ratio the scalar paths use before any sample (budget room, the ring). */
export const COLD_START_RATIO = 1.15;
/** Prompts this small are dominated by fixed overheads the estimator does not model. */
export const CALIBRATION_MIN_TOKENS = 64;

/** A per-class fit: the ratios and their covariance (row-major, CONTENT_CLASSES order). */
export type ClassFit = { ratios: ClassRatios; covariance: number[] };

export type Calibration = {
  /** The overall ratio of real to raw tokens for the last turn's mix (what the admin page shows). */
  ratio: number;
  samples: number;
  /** Null for a calibration stored before per-class fitting: its classes start cold. */
  classFit?: ClassFit | null;
};

/** One turn's evidence: the provider's count and Fold's raw estimate by class. */
export type CalibrationSample = { realTokens: number; raw: ClassTokens };

/** The overall multiplier for paths that need one number (budget room, overhead). */
export function effectiveRatio(calibration: Calibration | null | undefined): number {
  return calibration && calibration.samples > 0 ? calibration.ratio : COLD_START_RATIO;
}

/** The per-class multipliers to apply to a raw estimate for this model. */
export function classRatios(calibration: Calibration | null | undefined): ClassRatios {
  return { ...(calibration?.classFit?.ratios ?? COLD_CLASS_RATIOS) };
}

/** The sample a turn yields, or null when it should not count. */
export function calibrationSample(
  realTokens: number,
  raw: Readonly<ClassTokens>,
): CalibrationSample | null {
  const total = classTotal(raw);
  if (total < CALIBRATION_MIN_TOKENS || realTokens <= 0) return null;
  const overall = realTokens / total;
  if (overall < RATIO_MIN || overall > RATIO_MAX) return null;
  return { realTokens, raw: { ...raw } };
}

function coldFit(): ClassFit {
  const n = CONTENT_CLASSES.length;
  const covariance = new Array<number>(n * n).fill(0);
  CONTENT_CLASSES.forEach((c, i) => {
    covariance[i * n + i] = PRIOR_SD[c] ** 2;
  });
  return { ratios: { ...COLD_CLASS_RATIOS }, covariance };
}

/** A stored fit that does not have one entry per class (an older class list) starts cold. */
function usableFit(fit: ClassFit | null | undefined): ClassFit {
  const n = CONTENT_CLASSES.length;
  const complete =
    fit &&
    fit.covariance.length === n * n &&
    CONTENT_CLASSES.every((c) => Number.isFinite(fit.ratios[c]));
  return complete ? { ratios: { ...fit.ratios }, covariance: [...fit.covariance] } : coldFit();
}

/** One Kalman update of the fit on a turn's class shares and overall ratio. */
export function nextClassFit(previous: ClassFit | null | undefined, sample: CalibrationSample) {
  const n = CONTENT_CLASSES.length;
  const { ratios, covariance: p } = usableFit(previous);
  const total = classTotal(sample.raw);
  const share = CONTENT_CLASSES.map((c) => sample.raw[c] / total);
  const observed = sample.realTokens / total;
  for (let i = 0; i < n; i++) p[i * n + i] = (p[i * n + i] ?? 0) + DRIFT_SD ** 2;

  // gain = P·h / (hᵀ·P·h + noise); ratios += gain · (observed − hᵀ·ratios); P −= gain · hᵀ·P
  const ph = share.map((_, i) => share.reduce((sum, h, j) => sum + (p[i * n + j] ?? 0) * h, 0));
  const variance = share.reduce((sum, h, i) => sum + h * (ph[i] ?? 0), 0) + SAMPLE_NOISE_SD ** 2;
  const predicted = CONTENT_CLASSES.reduce((sum, c, i) => sum + ratios[c] * (share[i] ?? 0), 0);
  const gain = ph.map((v) => v / variance);
  CONTENT_CLASSES.forEach((c, i) => {
    const next = ratios[c] + (gain[i] ?? 0) * (observed - predicted);
    ratios[c] = Math.min(RATIO_MAX, Math.max(RATIO_MIN, next));
  });
  const covariance = p.map((value, k) => {
    const i = Math.floor(k / n);
    const j = k % n;
    return value - (gain[i] ?? 0) * (ph[j] ?? 0);
  });
  return { ratios, covariance };
}

/** The calibration after one more sample. */
export function nextCalibration(
  previous: Calibration | null | undefined,
  sample: CalibrationSample,
): Calibration {
  const classFit = nextClassFit(previous?.classFit, sample);
  const total = classTotal(sample.raw);
  let fitted = 0;
  for (const c of CONTENT_CLASSES) fitted += sample.raw[c] * classFit.ratios[c];
  return { ratio: fitted / total, samples: (previous?.samples ?? 0) + 1, classFit };
}
