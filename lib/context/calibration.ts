/**
 * Self-calibration (DESIGN §5, issue 13): each turn compares Fold's raw
 * estimate of the prompt, split by content class, with the provider's real
 * count, and refines one ratio per class for that model. Real tokenizers skew
 * by content (Qwen and Gemma split numbers into digits, Claude spends 3× and
 * more on Arabic and Indic scripts), so one ratio per model would be right only for the mix it
 * last saw.
 *
 * The fit is a small Kalman filter (recursive least squares with a prior) on
 * the turn's class mix: y = real / raw ≈ Σ ratio[c] · share[c]. It learns only
 * from each turn's total real count. A turn moves the classes it contains, in
 * proportion to their share and how unsure we are of them; a class it lacks
 * moves only as far as the families are known to price it together with those
 * (the prior covariance, from class-priors.ts), so a model that proves cheap
 * on Russian is expected cheaper on Greek too, while prose stays put.
 *
 * A writing system is weighed twice: by its o200k tokens and by how many letters
 * those hold beyond the system's usual density (PROBE_UNIT_DENSITY), so its
 * fitted ratio is the price at usual density and its letter ratio the price of
 * denser, shorter, everyday text; code likewise by its indentation tabs
 * (content-class.ts, MeasuredClass).
 *
 * Before any sample the estimate uses the cold ratios (the highest any probed
 * family shows: over rather than under); the fit itself starts from the
 * families' typical ratios.
 */
import {
  PROBE_HIGHEST_RATIOS,
  PROBE_RATIOS,
  PROBE_UNIT_DENSITY,
  PROBE_UNIT_RATIOS,
} from "./class-priors";
import {
  type ClassRatios,
  type ClassTokens,
  CONTENT_CLASSES,
  type ContentClass,
  classTotal,
  FIT_MEASURES,
  type FitMeasure,
  MEASURED_CLASSES,
  type MeasuredClass,
  SCRIPT_CLASSES,
  unitKey,
} from "./content-class";

const roundUp = (value: number) => Math.ceil(value * 100) / 100;

/**
 * What a raw o200k count is multiplied by before any sample, per class: the highest ratio
 * the probed families show on any probe of that class (class-priors.ts), so a first turn
 * over-estimates rather than under-estimates whichever family it meets.
 */
export const COLD_CLASS_RATIOS: Readonly<ClassRatios> = Object.fromEntries(
  CONTENT_CLASSES.map((c) => [c, roundUp(Math.max(...PROBE_HIGHEST_RATIOS[c]))]),
) as ClassRatios;

const mean = (values: readonly number[]) =>
  values.reduce((sum, value) => sum + value, 0) / values.length;

/** The fit's coefficients: a ratio per class (a measured class's at its usual density), and per unit of each second count. */
export type FitRatios = Record<FitMeasure, number>;

const MEASURED_CLASS_OF = new Map(MEASURED_CLASSES.map((c) => [unitKey(c) as string, c]));

/** A measured class's usual count per o200k token (letters, tabs), where its fitted ratio applies. */
const usualDensity = (c: MeasuredClass) => PROBE_UNIT_DENSITY[c][0];

/** The probed families' values of one measure's coefficient. */
function probedRatios(measure: FitMeasure): readonly number[] {
  const measured = MEASURED_CLASS_OF.get(measure);
  return measured ? PROBE_UNIT_RATIOS[measured] : PROBE_RATIOS[measure as ContentClass];
}

/**
 * Where the fit starts once a first sample arrives: the probed families' typical ratio per
 * class, their mean. Starting from the cold (highest) ratios instead would leave every class
 * a turn cannot tell apart from the others far above any real family.
 */
export const PRIOR_CLASS_RATIOS: Readonly<FitRatios> = Object.fromEntries(
  FIT_MEASURES.map((m) => [m, mean(probedRatios(m))]),
) as FitRatios;

/** How far any family may be from the probed ones on a class, beyond their spread (one SD). */
const PRIOR_EXTRA_SD = 0.05;

/**
 * The prior fit's covariance: how the families' typical ratios spread about their mean, and
 * together, plus a little room on each class for a family unlike the probed ones. Classes the
 * families price alike move together: a turn that shows a model cheap on Cyrillic lowers its
 * (unseen) Arabic and Greek as well, and one that shows it cheap on Chinese points to the
 * families that are.
 */
function priorCovariance(): number[] {
  const n = FIT_MEASURES.length;
  const families = PROBE_RATIOS.prose.length;
  const spread = FIT_MEASURES.map((m) => probedRatios(m).map((r) => r - PRIOR_CLASS_RATIOS[m]));
  // Per unit, the room a ratio has spread over its usual density (a tab is rarer than a token).
  const extra = FIT_MEASURES.map((m) => {
    const measured = MEASURED_CLASS_OF.get(m);
    return measured ? PRIOR_EXTRA_SD / Math.max(1, usualDensity(measured)) : PRIOR_EXTRA_SD;
  });
  const covariance = new Array<number>(n * n).fill(0);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let f = 0; f < families; f++) sum += (spread[i]?.[f] ?? 0) * (spread[j]?.[f] ?? 0);
      covariance[i * n + j] = sum / families + (i === j ? (extra[i] ?? 0) ** 2 : 0);
    }
  }
  return covariance;
}
const PRIOR_COVARIANCE = priorCovariance();

/** Noise of one turn's overall ratio around the per-class model (≈ 1.5 %). */
const SAMPLE_NOISE_SD = 0.015;
/** Drift allowed per turn, so an old fit keeps learning (a model behind an alias can change). */
const DRIFT_SD = 0.005;
/** A turn's overall ratio outside this band is a broken turn (Claude spends ≈ 5× on Tamil); no class is learned above its top. */
const RATIO_MIN = 0.3;
const RATIO_MAX = 6;
/** The overall ratio the scalar paths use before any sample (budget room, the ring). */
export const COLD_START_RATIO = 1.15;
/**
 * A few tokens of any count move with where text meets framing (a merge across a message
 * edge), whatever the prompt's size: a small turn's overall ratio is that much noisier, so it
 * teaches less than a large one rather than nothing (short chats in Chinese are small).
 */
const EDGE_NOISE_TOKENS = 4;

/** A per-class fit: its coefficients and their covariance (row-major, FIT_MEASURES order). */
export type ClassFit = { ratios: FitRatios; covariance: number[] };

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

/**
 * The per-class multipliers to apply to a raw estimate for this model (applyRatio): a writing
 * measured class's ratio at its usual density, less its unit ratio times that density, on its
 * tokens; its unit ratio on its second count.
 */
export function classRatios(calibration: Calibration | null | undefined): ClassRatios {
  const fit = calibration?.classFit?.ratios;
  if (!fit) return { ...COLD_CLASS_RATIOS };
  const ratios: ClassRatios = { ...fit };
  for (const c of MEASURED_CLASSES) {
    ratios[c] = fit[c] - fit[unitKey(c)] * usualDensity(c);
  }
  return ratios;
}

/** What a fit weighs of a turn, per raw token: each class's share, and each second count beyond its usual density. */
function measuresOf(raw: Readonly<ClassTokens>, total: number): number[] {
  return FIT_MEASURES.map((m) => {
    const measured = MEASURED_CLASS_OF.get(m);
    if (!measured) return raw[m as ContentClass] / total;
    return ((raw[unitKey(measured)] ?? 0) - usualDensity(measured) * raw[measured]) / total;
  });
}

/** The sample a turn yields, or null when it should not count. */
export function calibrationSample(
  realTokens: number,
  raw: Readonly<ClassTokens>,
): CalibrationSample | null {
  const total = classTotal(raw);
  if (total <= 0 || realTokens <= 0) return null;
  const overall = realTokens / total;
  if (overall < RATIO_MIN || overall > RATIO_MAX) return null;
  return { realTokens, raw: { ...raw } };
}

function priorFit(): ClassFit {
  return { ratios: { ...PRIOR_CLASS_RATIOS }, covariance: [...PRIOR_COVARIANCE] };
}

/** A stored fit that does not have one entry per class (an older class list) starts over. */
function usableFit(fit: ClassFit | null | undefined): ClassFit {
  const n = FIT_MEASURES.length;
  const complete =
    fit &&
    fit.covariance.length === n * n &&
    FIT_MEASURES.every((m) => Number.isFinite(fit.ratios[m]));
  return complete ? { ratios: { ...fit.ratios }, covariance: [...fit.covariance] } : priorFit();
}

/** The writing systems before Devanagari was a class apart from the other Brahmic scripts. */
const SCRIPTS_BEFORE_DEVANAGARI = SCRIPT_CLASSES.filter((c) => c !== "devanagari");
const CLASSES_BEFORE_DEVANAGARI = CONTENT_CLASSES.filter((c) => c !== "devanagari");

/**
 * Measure lists fits were stored under before FIT_MEASURES, newest first: before Devanagari
 * was a class of its own (its text was `indic`, which keeps what it learned); before second
 * counts were weighed, the classes alone; before digit groups and tool calls were classes,
 * digit-heavy lines were one class (`digits`).
 */
export const EARLIER_CLASS_LISTS: readonly (readonly string[])[] = [
  [
    ...CLASSES_BEFORE_DEVANAGARI,
    ...MEASURED_CLASSES.filter((c) => c !== "devanagari").map(unitKey),
  ],
  CLASSES_BEFORE_DEVANAGARI,
  ["prose", "code", "json", "digits", ...SCRIPTS_BEFORE_DEVANAGARI, "frame"],
];

/**
 * A fit stored under an earlier class list, carried over: each class both lists hold keeps its
 * ratio and its covariance with the others kept (writing systems take many turns to learn); a
 * class new to this list starts from the prior, unrelated to what was learned.
 */
export function carriedFit(
  stored: { ratios: Readonly<Record<string, number>>; covariance: readonly number[] },
  storedClasses: readonly string[],
): ClassFit {
  const n = FIT_MEASURES.length;
  const m = storedClasses.length;
  const fit = priorFit();
  const from = FIT_MEASURES.map((c) => storedClasses.indexOf(c));
  for (let i = 0; i < n; i++) {
    const c = FIT_MEASURES[i] as FitMeasure;
    const old = from[i] ?? -1;
    if (old >= 0) fit.ratios[c] = stored.ratios[c] ?? fit.ratios[c];
    for (let j = 0; j < n; j++) {
      const oldJ = from[j] ?? -1;
      if (old >= 0 && oldJ >= 0) {
        fit.covariance[i * n + j] = stored.covariance[old * m + oldJ] ?? 0;
      } else if (old >= 0 !== oldJ >= 0) {
        fit.covariance[i * n + j] = 0;
      }
    }
  }
  return fit;
}

/** One Kalman update of the fit on a turn's class shares and overall ratio. */
export function nextClassFit(previous: ClassFit | null | undefined, sample: CalibrationSample) {
  const n = FIT_MEASURES.length;
  const { ratios, covariance: p } = usableFit(previous);
  const total = classTotal(sample.raw);
  const share = measuresOf(sample.raw, total);
  const observed = sample.realTokens / total;
  for (let i = 0; i < n; i++) p[i * n + i] = (p[i * n + i] ?? 0) + DRIFT_SD ** 2;

  // gain = P·h / (hᵀ·P·h + noise); ratios += gain · (observed − hᵀ·ratios); P −= gain · hᵀ·P
  const ph = share.map((_, i) => share.reduce((sum, h, j) => sum + (p[i * n + j] ?? 0) * h, 0));
  const noise = SAMPLE_NOISE_SD ** 2 + (EDGE_NOISE_TOKENS / total) ** 2;
  const variance = share.reduce((sum, h, i) => sum + h * (ph[i] ?? 0), 0) + noise;
  const predicted = FIT_MEASURES.reduce((sum, m, i) => sum + ratios[m] * (share[i] ?? 0), 0);
  const gain = ph.map((v) => v / variance);
  FIT_MEASURES.forEach((m, i) => {
    const next = ratios[m] + (gain[i] ?? 0) * (observed - predicted);
    // A class may cost a family nothing (DeepSeek's template leaves tool calls out), never less;
    // denser text may cost less per token or more.
    const floor = MEASURED_CLASS_OF.has(m) ? -RATIO_MAX : 0;
    ratios[m] = Math.min(RATIO_MAX, Math.max(floor, next));
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
  const measures = measuresOf(sample.raw, total);
  const fitted = FIT_MEASURES.reduce(
    (sum, m, i) => sum + classFit.ratios[m] * (measures[i] ?? 0),
    0,
  );
  return { ratio: fitted, samples: (previous?.samples ?? 0) + 1, classFit };
}
