import { describe, expect, it } from "vitest";
import {
  type Calibration,
  COLD_CLASS_RATIOS,
  COLD_START_RATIO,
  calibrationSample,
  classRatios,
  effectiveRatio,
  nextCalibration,
} from "@/lib/context/calibration";
import {
  type ClassRatios,
  type ClassTokens,
  CONTENT_CLASSES,
  emptyClassTokens,
} from "@/lib/context/content-class";
import { applyRatio } from "@/lib/context/tokens";

/** A provider whose tokenizer differs from o200k by class: Qwen-like digits, cheap CJK. */
const SKEW: ClassRatios = {
  prose: 1.04,
  code: 0.97,
  json: 1.12,
  cjk: 0.86,
  digits: 1.58,
  script: 1.2,
  indic: 2.5,
  // Per-message framing as ChatML counts it (the once-per-request framing is apart).
  frame: 1.25,
};

/** Deterministic class mixes: each turn is dominated by one or two classes, like real chats. */
function mix(turn: number): ClassTokens {
  const tokens = emptyClassTokens();
  const main = CONTENT_CLASSES[turn % CONTENT_CLASSES.length] ?? "prose";
  const second = CONTENT_CLASSES[(turn * 3 + 1) % CONTENT_CLASSES.length] ?? "code";
  tokens.prose += 200 + ((turn * 37) % 150);
  tokens.frame += 40 + (turn % 5) * 8;
  tokens[main] += 1_500 + ((turn * 53) % 700);
  tokens[second] += 300 + ((turn * 29) % 400);
  return tokens;
}

const real = (raw: ClassTokens, skew: ClassRatios) => applyRatio(raw, skew);
const errPct = (estimate: number, truth: number) => (Math.abs(estimate - truth) / truth) * 100;

describe("per-class calibration", () => {
  it("starts from the cold priors and the cold overall margin", () => {
    expect(classRatios(null)).toEqual(COLD_CLASS_RATIOS);
    expect(effectiveRatio(null)).toBe(COLD_START_RATIO);
    const old: Calibration = { ratio: 1.3, samples: 4, classFit: null };
    // A calibration stored before per-class fitting keeps its overall ratio; classes start cold.
    expect(effectiveRatio(old)).toBe(1.3);
    expect(classRatios(old)).toEqual(COLD_CLASS_RATIOS);
  });

  it("converges on a synthetic skew per class", () => {
    let calibration: Calibration | null = null;
    for (let turn = 0; turn < 40; turn++) {
      const raw = mix(turn);
      const sample = calibrationSample(real(raw, SKEW), raw);
      if (sample) calibration = nextCalibration(calibration, sample);
    }
    const learned = classRatios(calibration);
    for (const c of CONTENT_CLASSES) expect(learned[c]).toBeCloseTo(SKEW[c], 1);
    expect(calibration?.samples).toBe(40);
    // New mixes are then estimated within 1 %.
    for (let turn = 100; turn < 110; turn++) {
      const raw = mix(turn);
      expect(errPct(applyRatio(raw, learned), real(raw, SKEW))).toBeLessThan(1);
    }
  });

  it("moves only the classes a turn contains", () => {
    const raw = emptyClassTokens();
    raw.digits = 2_000;
    raw.frame = 20;
    const sample = calibrationSample(real(raw, SKEW), raw);
    if (!sample) throw new Error("expected a sample");
    const learned = classRatios(nextCalibration(null, sample));
    expect(learned.digits).toBeCloseTo(SKEW.digits, 1);
    expect(learned.cjk).toBe(COLD_CLASS_RATIOS.cjk);
    expect(learned.indic).toBe(COLD_CLASS_RATIOS.indic);
  });

  it("reports the overall ratio of the last turn's mix", () => {
    const raw = mix(3);
    const sample = calibrationSample(real(raw, SKEW), raw);
    if (!sample) throw new Error("expected a sample");
    const next = nextCalibration(null, sample);
    expect(next.samples).toBe(1);
    expect(next.ratio).toBeCloseTo(real(raw, SKEW) / sum(raw), 1);
  });

  it("never under-estimates by more than the 5 % reserve on the priors", () => {
    // The fit the estimator benchmark measures for Claude's tokenizer, the costliest family;
    // its per-message framing as tests/bench/estimator-priors.ts measures it.
    const claudeLike: ClassRatios = {
      prose: 1.04,
      code: 1.14,
      json: 1,
      cjk: 1.39,
      digits: 0.97,
      script: 1.89,
      indic: 3.1,
      frame: 1,
    };
    for (let turn = 0; turn < 50; turn++) {
      const raw = mix(turn);
      const cold = applyRatio(raw, classRatios(null));
      expect(cold).toBeGreaterThanOrEqual(0.95 * real(raw, claudeLike));
      expect(cold).toBeGreaterThanOrEqual(0.95 * real(raw, SKEW));
    }
  });

  it("ignores samples from tiny prompts and absurd ratios", () => {
    const tiny = { ...emptyClassTokens(), prose: 20 };
    const big = { ...emptyClassTokens(), prose: 1_000 };
    expect(calibrationSample(30, tiny)).toBeNull();
    expect(calibrationSample(5_000, big)).toBeNull();
    expect(calibrationSample(1_120, big)).toEqual({ realTokens: 1_120, raw: big });
  });
});

function sum(tokens: ClassTokens): number {
  return CONTENT_CLASSES.reduce((total, c) => total + tokens[c], 0);
}
