import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { beforeEach, describe, expect, it, vi } from "vitest";

// What the o200k encoder is handed: recorded, then encoded as it would be.
const handed = vi.hoisted(() => ({ longest: 0 }));
vi.mock("gpt-tokenizer/encoding/o200k_base", async (importOriginal) => {
  const actual = await importOriginal<typeof import("gpt-tokenizer/encoding/o200k_base")>();
  const seen = (text: string) => {
    handed.longest = Math.max(handed.longest, text.length);
  };
  return {
    ...actual,
    countTokens: (text: string, ...rest: unknown[]) => {
      seen(text);
      return (actual.countTokens as (...args: unknown[]) => number)(text, ...rest);
    },
    encode: (text: string, ...rest: unknown[]) => {
      seen(text);
      return (actual.encode as (...args: unknown[]) => number[])(text, ...rest);
    },
  };
});

import { createEstimator, ENCODER_PIECE_CHARS, encoderPieces } from "@/lib/context/tokens";

/**
 * o200k's encoder takes time that grows with the square of a run without a break (a pasted
 * block of CJK, a line of "=====", thousands of spaces): the estimator hands it such text in
 * pieces, and what that costs the count is a token or so per cut.
 */

const RUNS: Array<[string, string]> = [
  ["CJK characters", "漢字仮名交じり文".repeat(600)],
  ["letters", "a".repeat(5_000)],
  ["spaces", " ".repeat(5_000)],
  ["punctuation", "=-".repeat(2_500)],
  ["emoji", "😀🎉".repeat(1_200)],
];

describe("the encoder's pieces", () => {
  beforeEach(() => {
    handed.longest = 0;
  });

  it.each(RUNS)("a long run of %s reaches the encoder in pieces", (_name, text) => {
    createEstimator().countText(text.repeat(8));
    expect(handed.longest).toBeLessThanOrEqual(ENCODER_PIECE_CHARS);
  });

  it.each(RUNS)("a run of %s cut in pieces costs at most a token a cut", (_name, text) => {
    const exact = countTokens(text);
    const pieces = encoderPieces(text);
    const counted = createEstimator().countText(text);
    expect(pieces.join("")).toBe(text);
    expect(Math.abs(counted - exact)).toBeLessThanOrEqual(pieces.length);
  });

  it("leaves text with ordinary breaks whole, however long", () => {
    const prose = "The context window fills up as the conversation goes on. ".repeat(400);
    expect(encoderPieces(prose)).toEqual([prose]);
    createEstimator().countText(prose);
    expect(handed.longest).toBe(prose.length);
  });

  it("cuts at a space where one is near, so each word is counted as it was", () => {
    const words = `${"word ".repeat(300)}${"x".repeat(3_000)} ${"word ".repeat(300)}`;
    const pieces = encoderPieces(words);
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces.slice(1))
      expect(piece.startsWith("x") || piece.startsWith(" ")).toBe(true);
    expect(createEstimator().countText(words)).toBeLessThanOrEqual(
      countTokens(words) + pieces.length,
    );
  });

  it("never splits a character outside the BMP", () => {
    const text = `a${"😀".repeat(3_000)}`;
    for (const piece of encoderPieces(text)) expect(piece).toBe(piece.toWellFormed());
  });
});
