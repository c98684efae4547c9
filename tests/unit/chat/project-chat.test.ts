import { describe, expect, it } from "vitest";
import type { ModelBudget } from "@/lib/chat/budget";
import { projectChat } from "@/lib/chat/compact";
import { runTier1 } from "@/lib/compaction/tier1";
import { classRatios } from "@/lib/context/calibration";
import { defaultEstimator } from "@/lib/context/tokens";
import type { Chat } from "@/lib/db/schema";
import { env } from "@/lib/env";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import {
  BUDGET_8K,
  exchange,
  MODEL_ID,
  OVERHEAD_TOKENS,
  RATIO,
  summaryText,
  tier1Harness,
} from "../compaction/histories";

/**
 * The background compaction and a turn beside a running one decide on projectChat; Tier 1 then
 * decides on its own projection. The two must agree, or the background skips a fold the next
 * turn then waits for, or a turn told to wait folds a second time beside the background.
 */
describe("projectChat", () => {
  const history: FoldUIMessage[] = Array.from({ length: 10 }, (_, n) =>
    exchange(n, { userTokens: 150, textTokens: 200 }),
  ).flat();
  // A long message the user pinned, which the summary covers: it is sent after the summary.
  const pinnedAt = 2;
  history[pinnedAt] = { ...(history[pinnedAt] as FoldUIMessage), metadata: { pinned: true } };
  const state = {
    summary: summaryText("covered"),
    watermark: history[15]?.id ?? null,
    dirty: false,
    version: 3,
  };
  const chat = {
    id: "chat",
    contextSummary: state.summary,
    summaryWatermark: state.watermark,
    compactionDirty: false,
    version: state.version,
  } as Chat;
  // A calibrated model, its classes priced apart (not the overall ratio).
  const ratios = { ...classRatios(null), prose: 1.3 };
  const model = {
    modelId: MODEL_ID,
    window: { contextWindow: 8192, maxOutputTokens: null, source: "default" },
    budget: BUDGET_8K,
    ratio: RATIO,
    classRatios: ratios,
    calibrationSamples: 12,
  } as ModelBudget;

  it("projects the next request as Tier 1 does: pinned messages and per-class calibration counted", async () => {
    const { input } = tier1Harness();
    const tier1 = await runTier1(
      input(history, state, {
        classRatios: ratios,
        pinnedIds: new Set([history[pinnedAt]?.id ?? ""]),
        estimator: defaultEstimator,
        keepRecentToolResults: env().compaction.keepRecentToolResults,
      }),
    );
    expect(tier1.kind).toBe("noop");
    const projected = projectChat({
      chat,
      history,
      model,
      overheadTokens: OVERHEAD_TOKENS,
    }).projectedTokens;
    expect(projected).toBe(tier1.projectedTokens);

    // The pinned message is part of it: unpinned, the summary stands for it alone.
    const unpinned = history.map((m, i) => (i === pinnedAt ? { ...m, metadata: undefined } : m));
    expect(
      projectChat({ chat, history: unpinned, model, overheadTokens: OVERHEAD_TOKENS })
        .projectedTokens,
    ).toBeLessThan(projected);
  });
});
