import type { LanguageModelUsage } from "ai";
import { describe, expect, it } from "vitest";
import { projectNextTurn } from "@/lib/compaction/projection";
import { runTier1 } from "@/lib/compaction/tier1";
import { computeBudget } from "@/lib/context/budget";
import { buildStats, type MessageStats } from "@/lib/message/stats";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import {
  DEFAULT_RATIOS,
  EMPTY_STATE,
  exchange,
  filler,
  MODEL_ID,
  OVERHEAD_TOKENS,
  tier1Harness,
  userMessage,
} from "./histories";

/**
 * A reasoning model (DeepSeek R1 / Qwen 3 / o4-mini / Claude with thinking) answered a short
 * question after thinking for 10,000 tokens and writing 200 tokens of answer. The provider's
 * usage reports outputTokens = 10,200 (reasoning included), reasoningTokens = 10,000.
 * On the next turn providers drop the previous turn's reasoning (Fold's own count-units.ts
 * says so, and does not count it either): the request is the old context + the 200-token
 * answer + the new message.
 */
/** A 32k-window reasoning model with a 16k output limit (trigger ≈ 11,800 tokens). */
const BUDGET_32K = computeBudget(
  { contextWindow: 32_768, maxOutputTokens: 16_384 },
  DEFAULT_RATIOS,
);
const harness = () => tier1Harness({ budget: BUDGET_32K });

function chatAfterLongThinking(): FoldUIMessage[] {
  const h = harness();
  // Earlier turns: about 4,500 tokens of ordinary conversation.
  const earlier = [1, 2, 3].flatMap((n) => exchange(n, { userTokens: 700, textTokens: 800 }));
  const u1 = userMessage("u4", filler(2_000));
  const reasoning = filler(10_000, 3);
  const answer = filler(200, 5);
  const contextTokens = OVERHEAD_TOKENS + h.estimator.estimateUIMessages([...earlier, u1]);
  // Stats as the turn builds them from the provider's usage (one step).
  const usage = {
    inputTokens: contextTokens,
    inputTokenDetails: { noCacheTokens: contextTokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
    outputTokens: 10_200,
    outputTokenDetails: { textTokens: 200, reasoningTokens: 10_000 },
    totalTokens: contextTokens + 10_200,
  } as LanguageModelUsage;
  const stats: MessageStats = buildStats({
    model: MODEL_ID,
    contextWindow: 32_768,
    totalUsage: usage,
    lastStepUsage: usage,
    steps: 1,
    viewVersion: 0,
    startedAt: 0,
    firstTokenAt: 1,
    finishedAt: 2,
    finishReason: "stop",
  });
  const a1: FoldUIMessage = {
    id: "a4",
    role: "assistant",
    parts: [
      { type: "step-start" },
      { type: "reasoning", text: reasoning, state: "done" },
      { type: "text", text: answer, state: "done" },
    ],
    metadata: { stats },
  };
  return [...earlier, u1, a1, userMessage("u5", "thanks, and one more thing?")];
}

describe("the next turn's projection after a reply that reasoned", () => {
  it("does not count the last reply's reasoning tokens as context the next request carries", () => {
    const h = harness();
    const history = chatAfterLongThinking();
    const { projectedTokens, view } = projectNextTurn(h.input(history, EMPTY_STATE));
    // What is actually sent: overhead + u1 + the answer text + u2 (reasoning is not sent back /
    // not rendered by the providers, and Fold's estimator does not count it either).
    const sent = OVERHEAD_TOKENS + h.estimator.estimateUIMessages(view.messages);
    // Allow a generous margin; the bug adds the whole 10,000 reasoning tokens.
    expect(projectedTokens).toBeLessThan(sent + 500);
  });

  it("does not fold a chat that is far below the trigger just because the last reply thought at length", async () => {
    const h = harness();
    const history = chatAfterLongThinking();
    const result = await runTier1(h.input(history, EMPTY_STATE));
    // ~7,000 tokens really sent on a 32k window (trigger ≈ 11,800): nothing to compact.
    expect(h.summarizer.calls).toHaveLength(0);
    expect(result.kind).not.toBe("compacted");
  });
});
