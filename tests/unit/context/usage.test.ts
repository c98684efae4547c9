import { describe, expect, it } from "vitest";
import type { FoldUIMessage } from "@/lib/chat/ui-message";
import { computeBudget } from "@/lib/context/budget";
import { createEstimator } from "@/lib/context/tokens";
import { breakdown, projectContext } from "@/lib/context/usage";
import { COMPACTION_DEFAULTS } from "@/lib/env";

const user = (id: string, text: string): FoldUIMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text }],
});
const reply = (
  id: string,
  text: string,
  model: string,
  contextTokens: number,
  lastStepOutputTokens: number,
): FoldUIMessage => ({
  id,
  role: "assistant",
  parts: [{ type: "text", text }],
  metadata: {
    stats: {
      model,
      inputTokens: contextTokens,
      outputTokens: lastStepOutputTokens,
      lastStepOutputTokens,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      contextTokens,
      steps: 1,
      startedAt: 0,
      firstTokenAt: 1,
      finishedAt: 2,
      finishReason: "stop",
    },
  },
});

describe("projecting the next request", () => {
  it("starts from the provider's real count and estimates only what came after", () => {
    const estimator = createEstimator();
    const messages = [
      user("u1", "hello"),
      reply("a1", "hi there", "m:x", 1000, 50),
      user("u2", "and now a follow-up question"),
    ];
    const p = projectContext({
      messages,
      modelId: "m:x",
      overheadTokens: 200,
      ratio: 1,
      estimator,
    });
    expect(p.method).toBe("real");
    expect(p.lastContextTokens).toBe(1000);
    expect(p.projectedTokens).toBe(
      1000 + 50 + estimator.estimateUIMessages([messages[2] as FoldUIMessage]),
    );
  });

  it("estimates everything when the last reply came from another model", () => {
    const estimator = createEstimator();
    const messages = [user("u1", "hello"), reply("a1", "hi there", "other:model", 1000, 50)];
    const p = projectContext({
      messages,
      modelId: "m:x",
      overheadTokens: 200,
      ratio: 1.5,
      estimator,
    });
    expect(p.method).toBe("estimate");
    expect(p.projectedTokens).toBe(300 + estimator.estimateUIMessages(messages, { ratio: 1.5 }));
  });

  it("costs no tokenizer work for an unchanged chat", () => {
    const estimator = createEstimator();
    const messages: FoldUIMessage[] = [];
    for (let i = 0; i < 500; i++)
      messages.push(
        user(`u${i}`, `question ${i}`),
        reply(`a${i}`, `answer ${i}`, "m:x", 100 + i, 5),
      );
    projectContext({ messages, modelId: "m:x", overheadTokens: 200, ratio: 1, estimator });
    expect(estimator.stats.tokenizerCalls).toBe(0);
  });

  it("breaks the window down into parts that add up", () => {
    const estimator = createEstimator();
    const budget = computeBudget(
      { contextWindow: 8192, maxOutputTokens: null },
      { ...COMPACTION_DEFAULTS },
    );
    const p = projectContext({
      messages: [user("u1", "hello")],
      modelId: "m:x",
      overheadTokens: 300,
      ratio: 1,
      estimator,
    });
    const b = breakdown(p, budget);
    expect(b.systemAndTools + b.summary + b.messages + b.reservedForOutput + b.free).toBe(8192);
  });
});
