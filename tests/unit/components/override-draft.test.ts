import { describe, expect, it } from "vitest";
import { draftOnRefresh, parseDraft, sameDraft } from "@/components/admin/override-draft";

const TARGET_INPUT = { provider: "openai", model: "gpt-4o" };
const TARGET = { ...TARGET_INPUT, chainWindow: null, chainOutput: null };
const NOT_A_COUNT = "must be a whole number of tokens, in digits (commas or spaces may group them)";

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
    // Grouped the Indian way.
    expect(parseDraft({ contextWindow: "1,00,000", maxOutputTokens: "" }, TARGET)).toEqual({
      ok: true,
      input: { ...TARGET_INPUT, contextWindow: 100_000, maxOutputTokens: null },
    });
  });

  it("refuses what is not digits grouped by commas or spaces", () => {
    const parsed = parseDraft({ contextWindow: "128.5", maxOutputTokens: "12k" }, TARGET);
    expect(parsed).toEqual({
      ok: false,
      errors: {
        contextWindow: `Window ${NOT_A_COUNT}.`,
        maxOutputTokens: `Max output ${NOT_A_COUNT}.`,
      },
    });
  });

  it("refuses a count grouped with dots rather than reading 8.000 as 8", () => {
    expect(parseDraft({ contextWindow: "8.000", maxOutputTokens: "1.024" }, TARGET)).toEqual({
      ok: false,
      errors: {
        contextWindow: `Window ${NOT_A_COUNT}.`,
        maxOutputTokens: `Max output ${NOT_A_COUNT}.`,
      },
    });
    // The other field's own error still shows beside it.
    expect(parseDraft({ contextWindow: "0", maxOutputTokens: "8.000" }, TARGET)).toEqual({
      ok: false,
      errors: {
        contextWindow: "Window must be above zero.",
        maxOutputTokens: `Max output ${NOT_A_COUNT}.`,
      },
    });
    // Separators only between digits.
    for (const text of [",128", "128,", "1,,000", "8_000", "-8000", "8,5", "1 2", "12,34,5678"]) {
      expect(parseDraft({ contextWindow: text, maxOutputTokens: "" }, TARGET).ok).toBe(false);
    }
  });

  it("counts a draft with separators as the same as the stored number", () => {
    const stored = { contextWindow: "128000", maxOutputTokens: "" };
    expect(sameDraft({ contextWindow: "128,000", maxOutputTokens: " " }, stored)).toBe(true);
    expect(sameDraft({ contextWindow: "128,001", maxOutputTokens: "" }, stored)).toBe(false);
  });
});

describe("the override editor on a Refresh that brings another admin's override", () => {
  const before = { contextWindow: "12000", maxOutputTokens: "" };
  const now = { contextWindow: "14000", maxOutputTokens: "" };

  it("takes the new override while the draft reads as the one shown before", () => {
    expect(draftOnRefresh({ ...before }, before, now)).toEqual(now);
    // A digit typed and deleted again, or the same count with its commas, is no change.
    expect(draftOnRefresh({ contextWindow: "12,000", maxOutputTokens: " " }, before, now)).toEqual(
      now,
    );
  });

  it("keeps what the admin has changed, and takes the new override in the fields they have not", () => {
    expect(
      draftOnRefresh({ contextWindow: "13,000", maxOutputTokens: "2,000" }, before, now),
    ).toEqual({ contextWindow: "13,000", maxOutputTokens: "2,000" });
    // Only the output typed: the window is the other admin's, or Save would write 12,000 back.
    expect(
      draftOnRefresh({ contextWindow: "12000", maxOutputTokens: "2,000" }, before, now),
    ).toEqual({ contextWindow: "14000", maxOutputTokens: "2,000" });
  });
});
