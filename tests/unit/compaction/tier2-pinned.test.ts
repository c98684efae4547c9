import type { ModelMessage, PrepareStepFunction, ToolSet } from "ai";
import { describe, expect, it } from "vitest";
import { createTier2 } from "@/lib/compaction/tier2";
import { pinnedTextOf } from "@/lib/compaction/trim";
import { computeBudget } from "@/lib/context/budget";
import { createEstimator } from "@/lib/context/tokens";
import { COMPACTION_DEFAULTS } from "@/lib/env";

type StepInput = Parameters<PrepareStepFunction<ToolSet>>[0];
const BUDGET = computeBudget(
  { contextWindow: 32768, maxOutputTokens: null },
  {
    triggerRatio: COMPACTION_DEFAULTS.triggerRatio,
    targetRatio: COMPACTION_DEFAULTS.targetRatio,
    reserveRatio: COMPACTION_DEFAULTS.reserveRatio,
    keepRecentRatio: COMPACTION_DEFAULTS.keepRecentRatio,
    summaryRatio: COMPACTION_DEFAULTS.summaryRatio,
    bulkyRatio: COMPACTION_DEFAULTS.bulkyRatio,
  },
);
const OVERHEAD = 300;
const V = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
function filler(chars: number, seed: number): string {
  const w: string[] = [];
  let n = 0;
  for (let i = 0; n < chars; i++) {
    const x = `${V[(i * 5 + seed) % V.length]}${(i * 3 + seed) % 17}`;
    w.push(x);
    n += x.length + 1;
  }
  return w.join(" ").slice(0, chars);
}
function step(inputTokens: number) {
  return { usage: { inputTokens, outputTokens: 40, totalTokens: inputTokens + 40 } } as never;
}

describe("Tier 2 in a chat whose fold trigger was raised for a pinned message", () => {
  it("keeps the pinned message whole when folding the loop's steps makes room within the input budget", async () => {
    const est = createEstimator();
    // A pinned message larger than the target but well within the input budget.
    const pinnedText = `PINNED SPEC: ${filler(4 * (BUDGET.target + 1500), 3)} END-OF-SPEC`;
    const pinnedTokens = est.estimateModelMessages([{ role: "user", content: pinnedText }]);
    expect(pinnedTokens).toBeGreaterThan(BUDGET.target);
    expect(pinnedTokens + OVERHEAD + 2000).toBeLessThan(BUDGET.inputBudget);
    // foldTrigger (projection.ts) keeps the gap above the floor.
    const floor = pinnedTokens + BUDGET.summaryBudget;
    const raised = Math.min(BUDGET.inputBudget, floor + BUDGET.trigger - BUDGET.target);
    const messages: ModelMessage[] = [
      { role: "user", content: pinnedText },
      { role: "assistant", content: [{ type: "text", text: "Noted." }] },
      { role: "user", content: "Now check the pages against the spec." },
    ];
    for (let i = 0; i < 12; i++) {
      messages.push({
        role: "assistant",
        content: [
          {
            type: "tool-call",
            toolCallId: `c${i}`,
            toolName: "fetch_url",
            input: { url: `https://example.com/${i}` },
          },
        ],
      });
      messages.push({
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: `c${i}`,
            toolName: "fetch_url",
            output: { type: "text", value: filler(2400, i) },
          },
        ],
      });
    }
    const prepare = createTier2<ToolSet>({
      budget: { ...BUDGET, trigger: raised },
      ratio: 1,
      overheadTokens: OVERHEAD,
      estimator: est,
      keepRecentToolResults: 3,
      pinned: { texts: new Set([pinnedTextOf(messages[0] as never)]), toolCallIds: new Set() },
    });
    const result = await prepare({
      steps: [step(raised + 200)],
      stepNumber: 1,
      messages,
    } as unknown as StepInput);
    if (!result?.messages) throw new Error("expected a trim");
    // The pinned message is never shortened while the loop's own steps can make room.
    const sent = result.messages[0]?.content as string;
    expect(sent.length).toBe(pinnedText.length);
    expect(est.estimateModelMessages(result.messages) + OVERHEAD).toBeLessThanOrEqual(raised);
  });
});
