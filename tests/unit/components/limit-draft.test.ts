import { describe, expect, it } from "vitest";
import { changedLimits, parseLimitDraft } from "@/components/admin/limit-draft";

const IN_DIGITS = "in digits (commas or spaces may group them)";

describe("the daily limits' draft", () => {
  it("reads counts grouped by commas or spaces, and empty as no limit", () => {
    expect(parseLimitDraft({ dailyMessageLimit: " 1,000 ", dailyTokenLimit: "2 500 000" })).toEqual(
      { ok: true, values: { dailyMessageLimit: 1_000, dailyTokenLimit: 2_500_000 } },
    );
    expect(parseLimitDraft({ dailyMessageLimit: "", dailyTokenLimit: "1,00,000" })).toEqual({
      ok: true,
      values: { dailyMessageLimit: null, dailyTokenLimit: 100_000 },
    });
  });

  it("refuses 8.000 and 8,5 rather than reading them as 8 and 85", () => {
    expect(parseLimitDraft({ dailyMessageLimit: "8,5", dailyTokenLimit: "8.000" })).toEqual({
      ok: false,
      errors: {
        dailyMessageLimit: `Messages must be a whole number of messages, ${IN_DIGITS}.`,
        dailyTokenLimit: `Tokens must be a whole number of tokens, ${IN_DIGITS}.`,
      },
    });
  });

  it("says what the server would for a count out of range", () => {
    expect(parseLimitDraft({ dailyMessageLimit: "2,000,000", dailyTokenLimit: "" })).toEqual({
      ok: false,
      errors: { dailyMessageLimit: "Messages must be at most 1,000,000." },
    });
  });
});

describe("changedLimits", () => {
  const stored = { dailyMessageLimit: 100, dailyTokenLimit: null };
  it("names only the limits that differ from those the fields were filled from", () => {
    expect(changedLimits(stored, { dailyMessageLimit: 40, dailyTokenLimit: null })).toEqual({
      dailyMessageLimit: 40,
    });
    expect(changedLimits(stored, { dailyMessageLimit: 100, dailyTokenLimit: 5_000 })).toEqual({
      dailyTokenLimit: 5_000,
    });
  });

  it("names a limit cleared to none, and nothing when nothing changed", () => {
    expect(changedLimits(stored, { dailyMessageLimit: null, dailyTokenLimit: null })).toEqual({
      dailyMessageLimit: null,
    });
    expect(changedLimits(stored, { ...stored })).toEqual({});
  });
});
