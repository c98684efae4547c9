import { describe, expect, it } from "vitest";
import { breakdown } from "@/lib/context/breakdown";
import { computeBudget } from "@/lib/context/budget";
import { COMPACTION_DEFAULTS } from "@/lib/env";

const BUDGET_8K = computeBudget(
  { contextWindow: 8192, maxOutputTokens: null },
  { ...COMPACTION_DEFAULTS },
);

describe("the ring's breakdown", () => {
  it("breaks the window down into parts that add up", () => {
    const b = breakdown(
      { projectedTokens: 1500, overheadTokens: 300, summaryTokens: 400 },
      BUDGET_8K,
    );
    expect(b).toMatchObject({ systemAndTools: 300, summary: 400, messages: 800 });
    expect(b.systemAndTools + b.summary + b.messages + b.reservedForOutput + b.free).toBe(8192);
  });

  it("never shows negative messages or free space", () => {
    const b = breakdown({ projectedTokens: 100, overheadTokens: 300, summaryTokens: 0 }, BUDGET_8K);
    expect(b.messages).toBe(0);
    const full = breakdown(
      { projectedTokens: 9000, overheadTokens: 300, summaryTokens: 0 },
      BUDGET_8K,
    );
    expect(full.free).toBe(0);
  });
});
