import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";
import { expect, it } from "vitest";
import { summarizerModel } from "@/lib/chat/summarizer-models";
import { createSummarizer } from "@/lib/compaction/summarize";
import { createEstimator } from "@/lib/context/tokens";
import { exchange, filler, summaryText } from "./histories";

/**
 * The chat's own model summarizes by default (COMPACTION_SUMMARIZER_MODELS unset). A reasoning
 * model (Qwen 3 on vLLM/Ollama/llama.cpp, DeepSeek R1, o4-mini) thinks before it writes, and its
 * thinking counts against max_tokens / max_output_tokens. Fold's summarizer ceiling is the
 * summary's own budget (≤ 0.15 of the input budget, ~860 tokens on an 8k window).
 */
const THINKING_TOKENS = 1_500;
const estimator = createEstimator();

function reasoningSummarizerModel() {
  const calls: LanguageModelV4CallOptions[] = [];
  const model = new MockLanguageModelV4({
    doGenerate: async (options): Promise<LanguageModelV4GenerateResult> => {
      calls.push(options);
      const thinks = options.reasoning !== "none" && options.reasoning !== "minimal";
      const thinking = thinks ? THINKING_TOKENS : 0;
      const limit = options.maxOutputTokens ?? Number.POSITIVE_INFINITY;
      const summary = summaryText("folded");
      const summaryTokens = estimator.countText(summary);
      const room = Math.max(0, limit - thinking);
      const cut = room < summaryTokens;
      // What fits of the summary after the thinking, in whole lines.
      const lines = summary.split("\n");
      let text = "";
      for (const line of lines) {
        const next = text ? `${text}\n${line}` : line;
        if (estimator.countText(next) > room) break;
        text = next;
      }
      return {
        content: [
          ...(thinks
            ? [{ type: "reasoning" as const, text: filler(Math.min(thinking, limit), 9) }]
            : []),
          ...(text ? [{ type: "text" as const, text }] : []),
        ],
        finishReason: cut ? { unified: "length", raw: "length" } : { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: 2_000, noCache: 2_000, cacheRead: 0, cacheWrite: 0 },
          outputTokens: {
            total: Math.min(limit, thinking + summaryTokens),
            text: Math.max(0, Math.min(limit, thinking + summaryTokens) - thinking),
            reasoning: Math.min(limit, thinking),
          },
        },
        warnings: [],
      };
    },
  });
  return { model, calls };
}

it("a reasoning chat model used as its own summarizer writes the summary instead of spending the whole ceiling thinking", async () => {
  const { model, calls } = reasoningSummarizerModel();
  const summarize = createSummarizer({
    models: [summarizerModel({ id: "local:qwen3-8b", model, contextWindow: 8_192 })],
    timeoutMs: 10_000,
    estimator,
  });
  const span = [1, 2, 3].flatMap((n) => exchange(n, { userTokens: 200, textTokens: 300 }));
  // Not thinking only, cut at the ceiling (finish "length", no text): "summary is empty
  // or too short", the cascade fails, and every compaction of the chat is the fallback digest.
  const result = await summarize({ previousSummary: null, span, summaryBudget: 860 });
  expect(calls.length).toBeGreaterThan(0);
  expect(result.summary).toContain("## Goal & open requests");
  expect(result.summary).toContain("folded:");
});
