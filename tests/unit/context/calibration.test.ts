import { describe, expect, it } from "vitest";
import {
  COLD_START_RATIO,
  calibrationSample,
  effectiveRatio,
  nextCalibration,
} from "@/lib/context/calibration";

describe("calibration", () => {
  it("applies the cold-start margin until the model has a sample", () => {
    expect(effectiveRatio(null)).toBe(COLD_START_RATIO);
    expect(effectiveRatio({ ratio: 1.3, samples: 0 })).toBe(COLD_START_RATIO);
    expect(effectiveRatio({ ratio: 1.3, samples: 2 })).toBe(1.3);
  });

  it("takes the first sample outright, then moves by a moving average", () => {
    const first = nextCalibration(null, 1.12);
    expect(first).toEqual({ ratio: 1.12, samples: 1 });
    const second = nextCalibration(first, 1.2);
    expect(second.samples).toBe(2);
    expect(second.ratio).toBeGreaterThan(1.12);
    expect(second.ratio).toBeLessThan(1.2);
  });

  it("converges on a steady ratio", () => {
    let c = nextCalibration(null, 0.9);
    for (let i = 0; i < 8; i++) c = nextCalibration(c, 1.12);
    expect(Math.abs(c.ratio - 1.12)).toBeLessThan(0.001);
  });

  it("ignores samples from tiny prompts and absurd ratios", () => {
    expect(calibrationSample(30, 20)).toBeNull();
    expect(calibrationSample(5000, 1000)).toBeNull();
    expect(calibrationSample(1120, 1000)).toBeCloseTo(1.12);
  });
});
