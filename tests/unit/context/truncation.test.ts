import { describe, expect, it } from "vitest";
import { emptyClassTokens } from "@/lib/context/content-class";
import {
  detectTruncation,
  MIN_OBSERVED_WINDOW_TOKENS,
  MIN_SHORTFALL_TOKENS,
} from "@/lib/context/truncation";

describe("silent truncation, seen from usage", () => {
  it("a whole request counted under 70 % of the estimate was cut", () => {
    expect(
      detectTruncation({ reportedTokens: 4096, estimatedRawTokens: 6000, estimatedTokens: 6000 }),
    ).toEqual({ keptTokens: 4096, sentTokens: 6000, rule: "ratio" });
  });

  it("a family that prices the content far below o200k is no cut, before calibration knows it", () => {
    // Emoji: Gemma 3 counts ≈ 0.58 of o200k. Tool calls: DeepSeek V3's template leaves them out.
    const emoji = { ...emptyClassTokens(), emoji: 2_000, prose: 200, frame: 40 };
    const calls = { ...emptyClassTokens(), call: 6_000, prose: 2_000, frame: 80 };
    for (const [raw, reported] of [
      [emoji, 1_390],
      [calls, 2_200],
    ] as const) {
      const total = Object.values(raw).reduce((sum, n) => sum + n, 0);
      // Cold: the estimate is well above the raw count, so the raw count is what is compared.
      const input = {
        reportedTokens: reported,
        estimatedRawTokens: total,
        estimatedTokens: total * 1.3,
      };
      expect(detectTruncation(input)).toMatchObject({ rule: "ratio" });
      expect(detectTruncation({ ...input, estimatedRawClasses: raw })).toBeNull();
    }
  });

  it("while prose counted far below it is still a cut", () => {
    const prose = { ...emptyClassTokens(), prose: 6_000, frame: 60 };
    expect(
      detectTruncation({
        reportedTokens: 4_096,
        estimatedRawTokens: 6_060,
        estimatedTokens: 6_900,
        estimatedRawClasses: prose,
      }),
    ).toMatchObject({ rule: "ratio", keptTokens: 4_096 });
  });

  it("the cold-start margin does not make a fair count look short", () => {
    // A provider counting 80 % of o200k, with the 1.15 cold-start ratio: 0.8 / 1.15 < 0.7.
    expect(
      detectTruncation({ reportedTokens: 4000, estimatedRawTokens: 5000, estimatedTokens: 5750 }),
    ).toBeNull();
  });

  it("a count below any real window is not taken for one (a server counting cached tokens out)", () => {
    expect(
      detectTruncation({
        reportedTokens: MIN_OBSERVED_WINDOW_TOKENS - 1,
        estimatedRawTokens: 9000,
        estimatedTokens: 9000,
      }),
    ).toBeNull();
  });

  it("a small cut shows in the growth since the previous request", () => {
    const input = { estimatedRawTokens: 4400, estimatedTokens: 4400 };
    // The previous request counted 4,000; 400 tokens were added; the server counted 4,096.
    expect(
      detectTruncation({
        ...input,
        reportedTokens: 4096,
        previous: { reportedTokens: 4000, addedTokens: 400 },
      }),
    ).toEqual({ keptTokens: 4096, sentTokens: 4400, rule: "growth" });
    // Growth within the estimator's error is not a cut.
    expect(
      detectTruncation({
        ...input,
        reportedTokens: 4330,
        previous: { reportedTokens: 4000, addedTokens: 400 },
      }),
    ).toBeNull();
  });

  it("a few messages of growth need at least MIN_SHORTFALL_TOKENS missing", () => {
    const previous = { reportedTokens: 3000, addedTokens: 60 };
    const base = { estimatedRawTokens: 3100, estimatedTokens: 3100, previous };
    expect(detectTruncation({ ...base, reportedTokens: 3060 - MIN_SHORTFALL_TOKENS })).toBeNull();
    expect(
      detectTruncation({ ...base, reportedTokens: 3060 - MIN_SHORTFALL_TOKENS - 1 }),
    ).toMatchObject({ rule: "growth" });
  });

  it("a count about as large as the estimate of the whole request is whole, whatever came before", () => {
    // The replay benchmark's case: the previous count was larger than this request less what
    // it added (something of that request was not sent again), yet this count is within a few
    // tokens of everything Fold sent. Taken for a cut, it set the window to 2,280 of 8,192.
    const fair = {
      reportedTokens: 2280,
      estimatedRawTokens: 2266,
      estimatedTokens: 2285,
      previous: { reportedTokens: 2371, addedTokens: 103 },
    };
    expect(detectTruncation(fair)).toBeNull();
    // The same baseline with a count that falls short of the whole request by more is a cut.
    expect(
      detectTruncation({ ...fair, reportedTokens: 2285 - MIN_SHORTFALL_TOKENS - 1 }),
    ).toMatchObject({
      rule: "growth",
    });
  });

  it("a model whose counts wander is given that much more room before a shortfall is a cut", () => {
    // The recovery benchmark's skewed server: counts ±20 % off, each turn anew. The count fell
    // a quarter short of the growth; taken for a cut, it set the window to 2,076 of 8,192.
    const jumpy = {
      reportedTokens: 2076,
      estimatedRawTokens: 2469,
      estimatedTokens: 2665,
      previous: { reportedTokens: 2480, addedTokens: 278 },
    };
    expect(detectTruncation(jumpy)).toMatchObject({ rule: "growth" });
    expect(detectTruncation({ ...jumpy, countNoise: 0.2 })).toBeNull();
    // A tokenizer that misses by a percent still has the same shortfall read as a cut.
    expect(detectTruncation({ ...jumpy, countNoise: 0.01 })).toMatchObject({ rule: "growth" });
  });

  it("a count at or above Fold's own estimate is never a cut", () => {
    expect(
      detectTruncation({
        reportedTokens: 5000,
        estimatedRawTokens: 5000,
        estimatedTokens: 5000,
        previous: { reportedTokens: 5000, addedTokens: 500 },
      }),
    ).toBeNull();
  });
});
