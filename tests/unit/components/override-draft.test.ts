import { describe, expect, it } from "vitest";
import { parseDraft, sameDraft } from "@/components/admin/override-draft";

const TARGET_INPUT = { provider: "openai", model: "gpt-4o" };
const TARGET = { ...TARGET_INPUT, chainWindow: null, chainOutput: null };

describe("the override editor's draft", () => {
  it("reads a count written with commas or spaces as that count, not as empty", () => {
    expect(parseDraft({ contextWindow: "128,000", maxOutputTokens: " 16 384 " }, TARGET)).toEqual({
      ok: true,
      input: { ...TARGET_INPUT, contextWindow: 128_000, maxOutputTokens: 16_384 },
    });
    // A thin no-break space, as some locales group digits.
    expect(parseDraft({ contextWindow: "200\u202f000", maxOutputTokens: "" }, TARGET)).toEqual({
      ok: true,
      input: { ...TARGET_INPUT, contextWindow: 200_000, maxOutputTokens: null },
    });
  });

  it("still refuses what is not a whole number once the separators are gone", () => {
    const parsed = parseDraft({ contextWindow: "128.5", maxOutputTokens: "12k" }, TARGET);
    expect(parsed).toEqual({
      ok: false,
      errors: {
        contextWindow: "Window must be a whole number of tokens.",
        maxOutputTokens: "Max output must be a number or null.",
      },
    });
  });

  it("counts a draft with separators as the same as the stored number", () => {
    const stored = { contextWindow: "128000", maxOutputTokens: "" };
    expect(sameDraft({ contextWindow: "128,000", maxOutputTokens: " " }, stored)).toBe(true);
    expect(sameDraft({ contextWindow: "128,001", maxOutputTokens: "" }, stored)).toBe(false);
  });
});
