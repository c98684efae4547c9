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
 * The fit weighs the probed families as hypotheses beside it (class-priors.ts): each family's
 * own fit, started from its probes, learns from the same turns, and each is weighed by how
 * well it foresaw them. The estimate applies their coefficients by weight, so a class not yet
 * seen is priced as the families that fit what was seen price it (a model that prices code and
 * digit pairs as Gemma does is priced as Gemma on Hindi too), while the open fit, started from
 * the families' mean with their spread, takes the weight for a model unlike any of them.
 *
 * A count far below the estimate, on a turn of classes the fit has been foreseeing, is held back
 * (STRAY_Z): one broken count (a provider that reported only the tokens it had not cached)
 * learned in full pulled its classes down for many turns, and an estimate under the real count
 * is the one that overflows the window. The next such count of those classes is a change of
 * price and is learned, one turn late. A count far above the estimate is always learned:
 * holding it back would under-estimate a model that truly costs more.
 *
 * Before any sample the estimate uses the cold ratios (the highest any probed
 * family shows: over rather than under).
 */
import {
  PROBE_HIGHEST_RATIOS,
  PROBE_RATIOS,
  PROBE_UNIT_DENSITY,
  PROBE_UNIT_RATIOS,
  PROBED_FAMILIES,
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
  UNIT_KEYS,
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
 * How far a probed family's price on real text may be from its probes' (one SD): a quarter of
 * the families' spread on each class, together as they move, plus this on each.
 */
const FAMILY_SPREAD_SHARE = 0.25;
const FAMILY_EXTRA_SD = 0.1;

/** Per unit, the room a ratio has spread over its usual density (a tab is rarer than a token). */
function perMeasure(sd: number): number[] {
  return FIT_MEASURES.map((m) => {
    const measured = MEASURED_CLASS_OF.get(m);
    return measured ? sd / Math.max(1, usualDensity(measured)) : sd;
  });
}

/**
 * How the families' typical ratios spread about their mean, and together (row-major,
 * FIT_MEASURES order), times `share`, plus `extra` on each measure.
 */
function spreadCovariance(share: number, extraSd: number): number[] {
  const n = FIT_MEASURES.length;
  const families = PROBED_FAMILIES.length;
  const spread = FIT_MEASURES.map((m) => probedRatios(m).map((r) => r - PRIOR_CLASS_RATIOS[m]));
  const extra = perMeasure(extraSd);
  const covariance = new Array<number>(n * n).fill(0);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let f = 0; f < families; f++) sum += (spread[i]?.[f] ?? 0) * (spread[j]?.[f] ?? 0);
      covariance[i * n + j] = (share * sum) / families + (i === j ? (extra[i] ?? 0) ** 2 : 0);
    }
  }
  return covariance;
}

/**
 * The open fit's prior covariance: how the families' typical ratios spread about their mean,
 * and together, plus a little room on each class for a family unlike the probed ones. Classes
 * the families price alike move together: a turn that shows a model cheap on Cyrillic lowers
 * its (unseen) Arabic and Greek as well, and one that shows it cheap on Chinese points to the
 * families that are.
 */
const PRIOR_COVARIANCE = spreadCovariance(1, PRIOR_EXTRA_SD);
/** Each probed family's prior covariance about its own probes' ratios. */
const FAMILY_COVARIANCE = spreadCovariance(FAMILY_SPREAD_SHARE ** 2, FAMILY_EXTRA_SD);

/** Each probed family's probes' ratios, as a fit's coefficients. */
const FAMILY_RATIOS: readonly FitRatios[] = PROBED_FAMILIES.map(
  (_, f) => Object.fromEntries(FIT_MEASURES.map((m) => [m, probedRatios(m)[f] ?? 0])) as FitRatios,
);

/** Noise of one turn's overall ratio around the per-class model (≈ 1.5 %). */
const SAMPLE_NOISE_SD = 0.015;
/**
 * The same noise as the families' weights read it: a turn's text misses even the best
 * per-class fit by a few percent at times (short text, a mixed line), and one such turn should
 * not rule a family out. It is the noise of the text that changes from turn to turn: the
 * request's frame (Fold's instructions and tool schemas) is the same text on every turn, its
 * price learned by every hypothesis from the first, so a turn that is mostly frame misses by
 * that much less in its overall ratio. Read as a whole turn's noise, a short chat under the
 * frame taught the weights next to nothing: on the estimator benchmark's framed turns Qwen 3
 * kept a fifth of Gemma 3's weight for 30 turns (it prices Gemma's digits alike, its code a
 * little lower), and a first turn of Russian, Arabic and Hindi, which Qwen prices far above
 * Gemma, was estimated 7 % over. The fit's own noise (SAMPLE_NOISE_SD) stays whole: a fit
 * that trusted framed turns more learned their classes too fast.
 */
const WEIGHT_NOISE_SD = 0.03;
/**
 * A turn every hypothesis misses by far (a broken count, text unlike any probe) says little
 * about which is right: the weights read each miss as this likely at least (per unit of
 * overall ratio, as if 5 % of turns fell anywhere over a span of 1).
 */
const OUTLIER_DENSITY = 0.05;
/**
 * How far a fair count may be from the estimate, as a share of it (one SD), beyond how unsure
 * the fit is. A share rather than a fixed noise like WEIGHT_NOISE_SD: counts of a script a
 * family spends 3× on spread three times as wide in overall ratio, and the fit's own spread
 * shrinks to almost nothing once it has learned a class, so a fixed noise would make strays of
 * their ordinary spread, and holding back only the low ones would lift the fit. On the
 * estimator benchmark's real tokenizers a turn's count falls at most 15 % below the estimate.
 */
const STRAY_SD = 0.08;
/**
 * A count further than this many spreads from the estimate (about a quarter of it once the fit
 * is sure; the estimator benchmark's turns fall at most 1.2 spreads below it, 2.2 above) is a
 * stray. One below is held back when at least SETTLED_SHARE of its turn is of settled
 * classes (nextSettled); a stray unsettles them, so the next one of those classes is learned,
 * and so are the fair counts after a stray above that was learned (they stray below the
 * estimate it raised).
 */
const STRAY_Z = 3;
const SETTLED_SHARE = 0.5;
/** A class settled less than this is left out (it would barely count in the share). */
const SETTLED_MIN = 0.05;
/** No hypothesis falls below this weight, so one wrongly ruled out can come back. */
const MIN_LOG_WEIGHT = Math.log(1e-4);
/**
 * The share of weight the probed families start with when a fit stored before they were
 * weighed is carried over: what it learned stays in charge until a family predicts better.
 */
const CARRIED_FAMILIES_WEIGHT = 0.01;
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
 *
 * A writing system's text misses its class's line by more than this (a short Hindi chat can
 * cost a family a quarter more per o200k token than a longer Hindi text of the same letters
 * per token, by which words its vocabulary holds whole), yet no extra noise is added for it:
 * a turn's noise grown with its script tokens, by their share or by their square root, slowed
 * what the fit learns from every script turn more than it spared the next turn an odd one
 * (the estimator benchmark's mean error rose for most families, its worst turns stayed).
 */
const EDGE_NOISE_TOKENS = 4;

/**
 * The probed families as hypotheses beside the open fit: each family's own fit, started from
 * its probes, all sharing one covariance (they learn from the same turns with the same prior
 * spread, so their covariances stay equal), and the log weight of each hypothesis.
 */
export type FamilyFits = {
  /** The open fit's, then each probed family's (PROBED_FAMILIES order), normalized to sum to 1. */
  logWeights: number[];
  /** Each probed family's coefficients. */
  ratios: FitRatios[];
  covariance: number[];
};

/**
 * A per-class fit: its coefficients, what estimates apply (the hypotheses' by weight); the open
 * fit's own coefficients and covariance (row-major, FIT_MEASURES order); and the families'.
 */
export type ClassFit = {
  ratios: FitRatios;
  /** The open fit's coefficients; absent in a fit stored before families were weighed (then `ratios`). */
  open?: FitRatios;
  covariance: number[];
  families?: FamilyFits;
  /**
   * How settled each class's price is (nextSettled): a count far below the estimate is held
   * back only on a turn mostly of settled classes. Absent in a fit stored before counts were
   * held back (its classes settle as its next turns are foreseen).
   */
  settled?: Settled;
  /**
   * How far the provider's count missed the calibrated estimate on the last turns, newest last:
   * |ln(count ÷ estimate)|, the estimate as the turn made it, before learning from it
   * (countNoise). Absent in a fit stored before misses were kept.
   */
  misses?: number[];
};

/** A fit as a turn updates it: every part present (what it missed is the calibration's). */
type UsableFit = Required<Omit<ClassFit, "misses">>;

/** Turns whose misses a fit keeps, and how many make a measure of them. */
const MISSES_KEPT = 9;
const MISSES_MEASURED = 3;

/** How settled each class's price is, 0 to 1. */
export type Settled = Partial<Record<ContentClass, number>>;

export type Calibration = {
  /** The overall ratio of real to raw tokens for the last turn's mix (what the admin page shows). */
  ratio: number;
  samples: number;
  /** Null for a calibration stored before per-class fitting: its classes start cold. */
  classFit?: ClassFit | null;
};

/**
 * One turn's evidence: the provider's count and Fold's raw estimate by class, and how many of
 * those raw tokens are the request's frame (instructions, tool schemas and their framing: the
 * same on every turn; absent, none).
 */
export type CalibrationSample = { realTokens: number; raw: ClassTokens; frameTokens?: number };

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
  frameTokens = 0,
): CalibrationSample | null {
  const total = classTotal(raw);
  if (total <= 0 || realTokens <= 0) return null;
  const overall = realTokens / total;
  if (overall < RATIO_MIN || overall > RATIO_MAX) return null;
  const frame = Math.min(total, Math.max(0, frameTokens));
  return { realTokens, raw: { ...raw }, ...(frame > 0 ? { frameTokens: frame } : {}) };
}

/** The hypotheses' prior weights: the open fit counts as one more family. */
function priorLogWeights(familiesWeight: number): number[] {
  const each = familiesWeight / PROBED_FAMILIES.length;
  return [Math.log(1 - familiesWeight), ...PROBED_FAMILIES.map(() => Math.log(each))];
}

function priorFamilies(familiesWeight: number): FamilyFits {
  return {
    logWeights: priorLogWeights(familiesWeight),
    ratios: FAMILY_RATIOS.map((r) => ({ ...r })),
    covariance: [...FAMILY_COVARIANCE],
  };
}

/** The hypotheses' coefficients by weight. */
function weighted(open: Readonly<FitRatios>, families: FamilyFits): FitRatios {
  const weights = families.logWeights.map(Math.exp);
  const total = weights.reduce((sum, w) => sum + w, 0);
  const [openWeight = 0, ...familyWeights] = weights;
  return Object.fromEntries(
    FIT_MEASURES.map((m) => {
      let sum = openWeight * open[m];
      familyWeights.forEach((w, f) => {
        sum += w * (families.ratios[f]?.[m] ?? 0);
      });
      return [m, sum / total];
    }),
  ) as FitRatios;
}

function priorFit(): ClassFit {
  const open = { ...PRIOR_CLASS_RATIOS };
  const families = priorFamilies(1 - 1 / (PROBED_FAMILIES.length + 1));
  return {
    ratios: weighted(open, families),
    open,
    covariance: [...PRIOR_COVARIANCE],
    families,
    settled: {},
  };
}

/** Whether a stored list of coefficients has one finite entry per measure. */
const complete = (ratios: Readonly<Record<string, number>> | undefined) =>
  ratios !== undefined && FIT_MEASURES.every((m) => Number.isFinite(ratios[m]));

/**
 * A stored fit that does not have one entry per class (an older class list) starts over; one
 * stored before the families were weighed keeps what it learned as its open fit, and the
 * families start from their probes with little weight.
 */
function usableFit(fit: ClassFit | null | undefined): UsableFit {
  const n = FIT_MEASURES.length;
  if (!fit || fit.covariance.length !== n * n || !complete(fit.ratios)) {
    return priorFit() as UsableFit;
  }
  const open = { ...(complete(fit.open) ? (fit.open as FitRatios) : fit.ratios) };
  const stored = fit.families;
  const families =
    stored &&
    stored.logWeights.length === PROBED_FAMILIES.length + 1 &&
    stored.ratios.length === PROBED_FAMILIES.length &&
    stored.ratios.every(complete) &&
    stored.covariance.length === n * n
      ? {
          logWeights: [...stored.logWeights],
          ratios: stored.ratios.map((r) => ({ ...r })),
          covariance: [...stored.covariance],
        }
      : priorFamilies(CARRIED_FAMILIES_WEIGHT);
  return {
    ratios: fit.ratios,
    open,
    covariance: [...fit.covariance],
    families,
    settled: usableSettled(fit.settled),
  };
}

/** The known classes of a stored `settled`, each in range. */
function usableSettled(stored: Readonly<Record<string, number>> | undefined): Settled {
  const settled: Settled = {};
  for (const c of CONTENT_CLASSES) {
    const value = stored?.[c];
    if (value !== undefined && Number.isFinite(value) && value > 0) {
      settled[c] = Math.min(1, value);
    }
  }
  return settled;
}

/** The classes before a request's own framing and the instructions' were apart from `frame`. */
const CLASSES_BEFORE_REQUEST_FRAMES = CONTENT_CLASSES.filter(
  (c) => c !== "requestFrame" && c !== "systemFrame",
);
/** The writing systems before Devanagari was a class apart from the other Brahmic scripts. */
const SCRIPTS_BEFORE_DEVANAGARI = SCRIPT_CLASSES.filter((c) => c !== "devanagari");
const CLASSES_BEFORE_DEVANAGARI = CLASSES_BEFORE_REQUEST_FRAMES.filter((c) => c !== "devanagari");

/**
 * Measure lists fits were stored under before FIT_MEASURES, newest first: before a request's
 * own framing and the instructions' were classes (their tokens were `frame`, which keeps what
 * it learned); before Devanagari was a class of its own (its text was `indic`, likewise); before
 * second counts were weighed, the classes alone; before digit groups and tool calls were
 * classes, digit-heavy lines were one class (`digits`). Only the first weighed the families
 * (carriedFit keeps them).
 */
export const EARLIER_CLASS_LISTS: readonly (readonly string[])[] = [
  [...CLASSES_BEFORE_REQUEST_FRAMES, ...UNIT_KEYS],
  [
    ...CLASSES_BEFORE_DEVANAGARI,
    ...MEASURED_CLASSES.filter((c) => c !== "devanagari").map(unitKey),
  ],
  CLASSES_BEFORE_DEVANAGARI,
  ["prose", "code", "json", "digits", ...SCRIPTS_BEFORE_DEVANAGARI, "frame"],
];

/** A fit as stored under an earlier class list: its parts by measure name. */
export type StoredFit = {
  ratios: Readonly<Record<string, number>>;
  covariance: readonly number[];
  open?: Readonly<Record<string, number>>;
  families?: {
    logWeights: readonly number[];
    ratios: readonly Readonly<Record<string, number>>[];
    covariance: readonly number[];
  };
  settled?: Readonly<Record<string, number>>;
  misses?: readonly number[];
};

/**
 * Coefficients stored under another measure list, in FIT_MEASURES: each measure both lists hold
 * keeps its value; one new to this list takes the prior's.
 */
function remappedRatios(
  ratios: Readonly<Record<string, number>>,
  storedClasses: readonly string[],
  prior: Readonly<FitRatios>,
): FitRatios {
  const next = { ...prior };
  for (const c of FIT_MEASURES) {
    if (storedClasses.includes(c)) next[c] = ratios[c] ?? next[c];
  }
  return next;
}

/**
 * A covariance stored under another measure list, in FIT_MEASURES: each pair both lists hold
 * keeps its value; a measure new to this list takes the prior's variance, unrelated to what was
 * learned.
 */
function remappedCovariance(
  covariance: readonly number[],
  storedClasses: readonly string[],
  prior: readonly number[],
): number[] {
  const n = FIT_MEASURES.length;
  const m = storedClasses.length;
  const next = [...prior];
  const from = FIT_MEASURES.map((c) => storedClasses.indexOf(c));
  for (let i = 0; i < n; i++) {
    const old = from[i] ?? -1;
    for (let j = 0; j < n; j++) {
      const oldJ = from[j] ?? -1;
      if (old >= 0 && oldJ >= 0) {
        next[i * n + j] = covariance[old * m + oldJ] ?? 0;
      } else if (old >= 0 !== oldJ >= 0) {
        next[i * n + j] = 0;
      }
    }
  }
  return next;
}

/**
 * A fit stored under an earlier class list, carried over measure by measure: writing
 * systems take many turns to learn. A fit that weighed the families keeps them as well — their
 * weights (which family this model prices like), their coefficients, how settled each class is
 * and the last misses — so an upgrade that adds a class does not make a model a stranger again;
 * older fits are the open fit alone, and the families start from their probes (usableFit).
 */
export function carriedFit(stored: StoredFit, storedClasses: readonly string[]): ClassFit {
  const open = {
    ratios: remappedRatios(stored.open ?? stored.ratios, storedClasses, PRIOR_CLASS_RATIOS),
    covariance: remappedCovariance(stored.covariance, storedClasses, PRIOR_COVARIANCE),
  };
  const kept = stored.families;
  if (
    !kept ||
    kept.logWeights.length !== PROBED_FAMILIES.length + 1 ||
    kept.ratios.length !== PROBED_FAMILIES.length
  ) {
    return { ratios: open.ratios, covariance: open.covariance };
  }
  const families: FamilyFits = {
    logWeights: [...kept.logWeights],
    ratios: kept.ratios.map((ratios, f) =>
      remappedRatios(ratios, storedClasses, FAMILY_RATIOS[f] as FitRatios),
    ),
    covariance: remappedCovariance(kept.covariance, storedClasses, FAMILY_COVARIANCE),
  };
  return {
    ratios: weighted(open.ratios, families),
    open: open.ratios,
    covariance: open.covariance,
    families,
    ...(stored.settled ? { settled: usableSettled(stored.settled) } : {}),
    ...(stored.misses ? { misses: [...stored.misses] } : {}),
  };
}

/** What a fit's coefficients foresee of a turn's overall ratio. */
const predict = (ratios: Readonly<FitRatios>, share: readonly number[]) =>
  FIT_MEASURES.reduce((sum, m, i) => sum + ratios[m] * (share[i] ?? 0), 0);

/**
 * One Kalman step's shape, whatever the coefficients (the covariance does not depend on them):
 * the gain, the spread hᵀ·P·h of the turn's ratio, and the covariance after.
 * gain = P·h / (hᵀ·P·h + noise); P −= gain · hᵀ·P
 */
function kalmanGain(stored: readonly number[], share: readonly number[], noise: number) {
  const n = FIT_MEASURES.length;
  const p = stored.map((value, k) => (Math.floor(k / n) === k % n ? value + DRIFT_SD ** 2 : value));
  const ph = share.map((_, i) => share.reduce((sum, h, j) => sum + (p[i * n + j] ?? 0) * h, 0));
  const spread = share.reduce((sum, h, i) => sum + h * (ph[i] ?? 0), 0);
  const gain = ph.map((v) => v / (spread + noise));
  // Each pair once, from the upper triangle: the covariance stays exactly symmetric, as the row
  // stores only that triangle (lib/db/queries/calibration.ts).
  const covariance = p.map((_, k) => {
    const i = Math.floor(k / n);
    const j = k % n;
    const row = Math.min(i, j);
    const column = Math.max(i, j);
    return (p[row * n + column] ?? 0) - (gain[row] ?? 0) * (ph[column] ?? 0);
  });
  return { gain, spread, covariance };
}

/** Coefficients after a turn (ratios += gain · (observed − hᵀ·ratios)), and how far they missed it. */
function kalmanMove(
  ratios: Readonly<FitRatios>,
  gain: readonly number[],
  share: readonly number[],
  observed: number,
) {
  const miss = observed - predict(ratios, share);
  const next = { ...ratios };
  FIT_MEASURES.forEach((m, i) => {
    const moved = ratios[m] + (gain[i] ?? 0) * miss;
    // A class may cost a family nothing (DeepSeek's template leaves tool calls out), never less;
    // denser text may cost less per token or more.
    const floor = MEASURED_CLASS_OF.has(m) ? -RATIO_MAX : 0;
    next[m] = Math.min(RATIO_MAX, Math.max(floor, moved));
  });
  return { ratios: next, miss };
}

/**
 * How many spreads a turn's overall ratio is from what the estimate foresaw: the hypotheses'
 * predictions by weight, as unsure as each is and as far apart as they are, with the turn's
 * own noise and STRAY_SD of the prediction.
 */
function strayness(
  fit: UsableFit,
  share: readonly number[],
  observed: number,
  spreads: { open: number; family: number; noise: number },
): number {
  const weights = fit.families.logWeights.map(Math.exp);
  const total = weights.reduce((sum, w) => sum + w, 0);
  const predictions = [
    predict(fit.open, share),
    ...fit.families.ratios.map((r) => predict(r, share)),
  ];
  const predicted = predictions.reduce((sum, p, i) => sum + (weights[i] ?? 0) * p, 0) / total;
  let variance = spreads.noise + (STRAY_SD * predicted) ** 2;
  predictions.forEach((p, i) => {
    const spread = i === 0 ? spreads.open : spreads.family;
    variance += ((weights[i] ?? 0) / total) * (spread + (p - predicted) ** 2);
  });
  return (observed - predicted) / Math.sqrt(variance);
}

/** The share of a turn's raw tokens that is of settled classes, by how settled each is. */
const settledShare = (settled: Settled, raw: Readonly<ClassTokens>, total: number) =>
  CONTENT_CLASSES.reduce((sum, c) => sum + (raw[c] / total) * (settled[c] ?? 0), 0);

/**
 * How settled each class is after a turn. A turn the estimate foresaw settles each of its
 * classes by the square of its part of the turn (its tokens over the turn's largest class's):
 * a small part could be priced far off without the turn missing, and the fit, which learns
 * every turn, would fit such parts to whatever its main classes leave over. A stray unsettles
 * each class by how closely the families tie its price to the turn's (their squared
 * correlation in the prior covariance): a model changed behind its name changes the prices
 * the families vary together, so a stray on Hindi lets the next stray on Bengali be learned.
 */
function nextSettled(
  settled: Settled,
  raw: Readonly<ClassTokens>,
  share: readonly number[],
  stray: boolean,
) {
  const n = FIT_MEASURES.length;
  const top = Math.max(...CONTENT_CLASSES.map((c) => raw[c]));
  const ch = share.map((_, i) =>
    share.reduce((sum, h, j) => sum + (PRIOR_COVARIANCE[i * n + j] ?? 0) * h, 0),
  );
  const spread = share.reduce((sum, h, i) => sum + h * (ch[i] ?? 0), 0);
  const next: Settled = {};
  CONTENT_CLASSES.forEach((c, i) => {
    const was = settled[c] ?? 0;
    const tied = (ch[i] ?? 0) ** 2 / ((PRIOR_COVARIANCE[i * n + i] ?? 0) * spread);
    const value = stray ? was * (1 - tied) : Math.max(was, (raw[c] / top) ** 2);
    if (value >= SETTLED_MIN) next[c] = value;
  });
  return next;
}

/**
 * The least share of a turn the weights read as its own text, however much of it is frame: the
 * frame's price is not known exactly either (families price its classes a few percent apart),
 * and a tokenizer unlike every probed family must keep its open fit's weight. Without a floor,
 * thirty framed turns of such a tokenizer left the open fit 1.7 % of the weight, and a first
 * Devanagari turn was then priced as the nearest family prices it, 15 % over.
 */
const TEXT_SHARE_MIN = 0.7;

/** The share of a turn that is not the request's frame, as the weights read it. */
function textShareOf(sample: CalibrationSample, total: number): number {
  const share = 1 - (sample.frameTokens ?? 0) / total;
  return Number.isFinite(share) ? Math.min(1, Math.max(TEXT_SHARE_MIN, share)) : 1;
}

/**
 * The log likelihood of a turn's miss, given its spread, as the weights read it: `textShare` is
 * the share of the turn that is not the request's frame (textShareOf).
 */
function logLikelihood(miss: number, spread: number, edge: number, textShare: number): number {
  const variance = spread + (WEIGHT_NOISE_SD * textShare) ** 2 + edge;
  const normal = Math.exp(-(miss * miss) / (2 * variance)) / Math.sqrt(2 * Math.PI * variance);
  return Math.log(normal + OUTLIER_DENSITY);
}

/**
 * One update of the fit on a turn's class shares and overall ratio: the open fit and each
 * family's learn from it (Kalman), and each hypothesis is weighed by how well it foresaw the
 * turn. A class the turn lacks moves within each hypothesis as the families price it together
 * with those it has; across them, toward the families whose prices fit what was seen (a model
 * that prices code and digits as Gemma does is priced as Gemma on Hindi too), and an open fit
 * that foresees better than any family takes the weight for a model unlike them. A turn whose
 * count strays far below the estimate, mostly of settled classes, teaches nothing but that
 * they are no longer settled.
 */
export function nextClassFit(
  previous: ClassFit | null | undefined,
  sample: CalibrationSample,
): ClassFit {
  const fit = usableFit(previous);
  const total = classTotal(sample.raw);
  const share = measuresOf(sample.raw, total);
  const observed = sample.realTokens / total;
  const edge = (EDGE_NOISE_TOKENS / total) ** 2;
  const noise = SAMPLE_NOISE_SD ** 2 + edge;
  const textShare = textShareOf(sample, total);

  const openStep = kalmanGain(fit.covariance, share, noise);
  const familyStep = kalmanGain(fit.families.covariance, share, noise);
  const z = strayness(fit, share, observed, {
    open: openStep.spread,
    family: familyStep.spread,
    noise,
  });
  const stray = Math.abs(z) > STRAY_Z;
  const settled = nextSettled(fit.settled, sample.raw, share, stray);
  if (z < -STRAY_Z && settledShare(fit.settled, sample.raw, total) >= SETTLED_SHARE) {
    // Held back: the fit stays as it was, and its classes are no longer settled.
    return { ...fit, settled };
  }
  const open = kalmanMove(fit.open, openStep.gain, share, observed);
  const logWeights = [
    (fit.families.logWeights[0] ?? 0) + logLikelihood(open.miss, openStep.spread, edge, textShare),
  ];
  const familyRatios = fit.families.ratios.map((ratios, f) => {
    const moved = kalmanMove(ratios, familyStep.gain, share, observed);
    const prior = fit.families.logWeights[f + 1] ?? MIN_LOG_WEIGHT;
    logWeights.push(prior + logLikelihood(moved.miss, familyStep.spread, edge, textShare));
    return moved.ratios;
  });
  const top = Math.max(...logWeights);
  const norm = top + Math.log(logWeights.reduce((sum, w) => sum + Math.exp(w - top), 0));
  const families: FamilyFits = {
    logWeights: logWeights.map((w) => Math.max(MIN_LOG_WEIGHT, w - norm)),
    ratios: familyRatios,
    covariance: familyStep.covariance,
  };
  return {
    ratios: weighted(open.ratios, families),
    open: open.ratios,
    covariance: openStep.covariance,
    families,
    settled,
  };
}

/** The calibration after one more sample. */
export function nextCalibration(
  previous: Calibration | null | undefined,
  sample: CalibrationSample,
): Calibration {
  const classFit = nextClassFit(previous?.classFit, sample);
  const total = classTotal(sample.raw);
  const measures = measuresOf(sample.raw, total);
  const fitted = predict(classFit.ratios, measures);
  // The miss of the estimate this turn was made with (none before any sample: the cold one).
  const before = previous?.samples ? previous.classFit?.ratios : undefined;
  const estimated = before ? predict(before, measures) * total : 0;
  const misses = previous?.classFit?.misses ?? [];
  if (estimated > 0) {
    classFit.misses = [...misses, Math.abs(Math.log(sample.realTokens / estimated))].slice(
      -MISSES_KEPT,
    );
  } else if (misses.length > 0) {
    classFit.misses = misses;
  }
  return { ratio: fitted, samples: (previous?.samples ?? 0) + 1, classFit };
}

/**
 * How far this model's count has lately missed its calibrated estimate, as a share: the largest
 * of the last turns' misses, 0 until there are a few. A real tokenizer's counts come within a
 * percent or two once calibration has had some turns; a provider whose counts jump on their own
 * (a router with several tokenizers behind one name, a proxy that counts its own way) misses by
 * more, and a count that falls short by that much is no sign of a silent cut.
 */
export function countNoise(calibration: Calibration | null | undefined): number {
  const misses = calibration?.classFit?.misses ?? [];
  return misses.length < MISSES_MEASURED ? 0 : Math.expm1(Math.max(...misses));
}
