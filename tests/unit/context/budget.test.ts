import { describe, expect, it } from "vitest";
import {
  type BudgetRatios,
  clampRatios,
  computeBudget,
  MIN_CONVERSATION_TOKENS,
  minimumWindow,
  outputReserveOf,
  windowTooSmall,
} from "@/lib/context/budget";
import { COMPACTION_DEFAULTS, loadEnv } from "@/lib/env";

const DEFAULTS: BudgetRatios = { ...COMPACTION_DEFAULTS };

describe("budget (DESIGN §7)", () => {
  it("divides an 8k window with an unknown output limit", () => {
    const b = computeBudget({ contextWindow: 8192, maxOutputTokens: null }, DEFAULTS);
    expect(b.outputReserve).toBe(2048); // min(4096, 0.25·W)
    expect(b.safetyReserve).toBe(409);
    expect(b.inputBudget).toBe(8192 - 2048 - 409);
    expect(b.trigger).toBe(Math.floor(0.8 * b.inputBudget));
    expect(b.target).toBe(Math.floor(0.5 * b.inputBudget));
    expect(b.keepRecent).toBe(Math.floor(0.25 * b.inputBudget));
    expect(b.summaryBudget).toBe(Math.floor(0.15 * b.inputBudget));
    expect(b.bulkyToolTokens).toBe(286);
  });

  it("uses the model's output limit, capped at half the window", () => {
    expect(
      computeBudget({ contextWindow: 128_000, maxOutputTokens: 16_384 }, DEFAULTS).outputReserve,
    ).toBe(16_384);
    expect(
      computeBudget({ contextWindow: 8192, maxOutputTokens: 8192 }, DEFAULTS).outputReserve,
    ).toBe(4096);
  });

  it("caps the summary at 4,000 tokens and keeps bulky tool results at least 256 tokens", () => {
    expect(
      computeBudget({ contextWindow: 1_000_000, maxOutputTokens: 32_000 }, DEFAULTS).summaryBudget,
    ).toBe(4000);
    expect(
      computeBudget({ contextWindow: 2048, maxOutputTokens: null }, DEFAULTS).bulkyToolTokens,
    ).toBe(256);
  });

  it("never lets both reserves take more than half the window", () => {
    const b = computeBudget(
      { contextWindow: 8192, maxOutputTokens: 4096 },
      { ...DEFAULTS, reserveRatio: 0.4 },
    );
    expect(b.outputReserve + b.safetyReserve).toBeLessThanOrEqual(4096);
    expect(b.inputBudget).toBeGreaterThanOrEqual(4096);
  });

  it("repairs a target that is not below the trigger, and says so", () => {
    const warnings: string[] = [];
    const fixed = clampRatios({ ...DEFAULTS, triggerRatio: 0.5, targetRatio: 0.6 }, (m) =>
      warnings.push(m),
    );
    expect(fixed.targetRatio).toBeLessThan(fixed.triggerRatio);
    expect(warnings).toHaveLength(1);
  });

  it("moves the target below a trigger set alone, and the trigger above a target set alone", () => {
    const warnings: string[] = [];
    const earlier = loadEnv({ COMPACTION_TRIGGER_RATIO: "0.4" }, (m) => warnings.push(m));
    expect(earlier.compaction.triggerRatio).toBe(0.4);
    expect(earlier.compaction.targetRatio).toBe(0.25);
    // Not crossed but so near that a fold would leave no room before the next.
    expect(
      loadEnv({ COMPACTION_TRIGGER_RATIO: "0.52" }, () => undefined).compaction.targetRatio,
    ).toBe(0.325);
    expect(
      loadEnv({ COMPACTION_TARGET_RATIO: "0.78" }, () => undefined).compaction.triggerRatio,
    ).toBe(0.99);
    const later = loadEnv({ COMPACTION_TARGET_RATIO: "0.85" }, (m) => warnings.push(m));
    expect(later.compaction.targetRatio).toBe(0.85);
    expect(later.compaction.triggerRatio).toBe(0.99);
    expect(warnings).toEqual([
      expect.stringMatching(/COMPACTION_TARGET_RATIO .* using 0\.25/),
      expect.stringMatching(/COMPACTION_SUMMARY_RATIO 0\.15 .* using 0\.125/),
      expect.stringMatching(/COMPACTION_TRIGGER_RATIO .* using 0\.99/),
    ]);
  });

  it("keeps the summary to half the target, so a fold keeps recent messages and lands under the trigger", () => {
    const warnings: string[] = [];
    // Compacting early (to save tokens) moved the target to 0.125, below the summary's 0.15.
    const { compaction } = loadEnv({ COMPACTION_TRIGGER_RATIO: "0.2" }, (m) => warnings.push(m));
    expect(compaction.summaryRatio).toBe(0.062);
    expect(warnings).toEqual([
      expect.stringMatching(/COMPACTION_TARGET_RATIO/),
      expect.stringMatching(/^COMPACTION_SUMMARY_RATIO 0\.15 would take more than half/),
    ]);
    for (const contextWindow of [4096, 8192, 32_768]) {
      const b = computeBudget({ contextWindow, maxOutputTokens: null }, compaction);
      expect(b.summaryBudget).toBeLessThanOrEqual(b.target / 2);
    }
    // The defaults, and a summary set within half the target, stand as they are.
    warnings.length = 0;
    expect(loadEnv({}, (m) => warnings.push(m)).compaction.summaryRatio).toBe(0.15);
    expect(
      loadEnv({ COMPACTION_SUMMARY_RATIO: "0.25" }, (m) => warnings.push(m)).compaction
        .summaryRatio,
    ).toBe(0.25);
    expect(warnings).toEqual([]);
  });

  it("repairs bad ratios once, when the environment is read, and the warning reaches the log", () => {
    const warnings: string[] = [];
    const env = loadEnv({ COMPACTION_TRIGGER_RATIO: "0.5", COMPACTION_TARGET_RATIO: "0.6" }, (m) =>
      warnings.push(m),
    );
    expect(warnings).toEqual([expect.stringMatching(/target 0\.6 is not below trigger 0\.5/)]);
    const b = computeBudget({ contextWindow: 8192, maxOutputTokens: null }, env.compaction);
    expect(b.target).toBeLessThan(b.trigger);
  });
});

describe("windowTooSmall", () => {
  it("accepts a window that leaves the reply's reserve and a short conversation", () => {
    expect(windowTooSmall({ contextWindow: 8192, maxOutputTokens: null })).toBeNull();
    expect(windowTooSmall({ contextWindow: 2048, maxOutputTokens: 1024 })).toBeNull();
  });

  it("refuses a window the budget would leave no conversation in, and names the smallest that works", () => {
    const reason = windowTooSmall({ contextWindow: 10, maxOutputTokens: null });
    expect(reason).toMatch(/8 are left for the conversation/);
    // 1,365 − a quarter of it for the reply (341) leaves 1,024.
    expect(reason).toMatch(/a window of 1,365 or more/);
  });

  it("the smallest window it names is the first one it accepts", () => {
    for (const maxOutputTokens of [null, 256, 1024, 100_000]) {
      const smallest = minimumWindow(maxOutputTokens);
      expect(windowTooSmall({ contextWindow: smallest, maxOutputTokens })).toBeNull();
      expect(windowTooSmall({ contextWindow: smallest - 1, maxOutputTokens })).not.toBeNull();
      expect(
        smallest - outputReserveOf({ contextWindow: smallest, maxOutputTokens }),
      ).toBeGreaterThanOrEqual(MIN_CONVERSATION_TOKENS);
    }
  });
});
