import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";
import { expect, it } from "vitest";
import { summarizerModel } from "@/lib/chat/summarizer-models";
import type { SummarizerModel } from "@/lib/compaction/ports";
import { createSummarizer } from "@/lib/compaction/summarize";
import { createEstimator } from "@/lib/context/tokens";
import { exchange, filler, SUMMARY_HEADINGS, summaryText } from "./histories";

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

/**
 * A reasoning model: asked at the summary's own ceiling it thinks through all of it (cut, no
 * text); asked again with room to think, it thinks a little and writes a summary far longer than
 * it was asked for, which ends on its own ("stop") inside the enlarged ceiling.
 */
function wordyThinker(): { entry: SummarizerModel; ceilings: number[] } {
  const ceilings: number[] = [];
  const entry: SummarizerModel = {
    id: "local:qwen3",
    contextWindow: 128_000,
    generate: async (call) => {
      ceilings.push(call.maxOutputTokens);
      if (ceilings.length === 1) {
        return { text: "", finishReason: "length", reasoningTokens: call.maxOutputTokens };
      }
      const text = SUMMARY_HEADINGS.map((h, i) => `${h}\n- ${filler(500, i)}`).join("\n");
      return { text, finishReason: "stop", reasoningTokens: 200 };
    },
  };
  return { entry, ceilings };
}

it("a summary written with thinking room stays within the summary's budget", async () => {
  const { entry, ceilings } = wordyThinker();
  const summarize = createSummarizer({ models: [entry], timeoutMs: 10_000, estimator });
  const span = Array.from({ length: 12 }, (_, n) =>
    exchange(n + 1, { userTokens: 600, textTokens: 600 }),
  ).flat();
  const summaryBudget = 860;
  const result = await summarize({ previousSummary: null, span, summaryBudget });
  // The retry was made with room to think beside the summary's ceiling.
  expect(ceilings[1]).toBeGreaterThan(ceilings[0] ?? 0);
  // The call's ceiling no longer bounds the summary: its own budget does (not ~3,000 tokens).
  expect(estimator.countText(result.summary)).toBeLessThanOrEqual(summaryBudget);
});

it("the retry with room to think gets its own timeout, as each summarizer call does", async () => {
  const CALL_MS = 150;
  let calls = 0;
  const entry: SummarizerModel = {
    id: "local:qwen3",
    contextWindow: 32_000,
    generate: async (call) => {
      calls += 1;
      const first = calls === 1;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, CALL_MS);
        call.abortSignal.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(call.abortSignal.reason);
        });
      });
      if (first) return { text: "", finishReason: "length", reasoningTokens: call.maxOutputTokens };
      const text = SUMMARY_HEADINGS.map((h, i) => `${h}\n- ${filler(20, i)}`).join("\n");
      return { text, finishReason: "stop", reasoningTokens: 500 };
    },
  };
  // Each call fits the timeout (150 ms < 250 ms); the two together do not.
  const summarize = createSummarizer({ models: [entry], timeoutMs: 250, estimator });
  const span = [1, 2, 3].flatMap((n) => exchange(n, { userTokens: 200, textTokens: 300 }));
  const result = await summarize({ previousSummary: null, span, summaryBudget: 860 });
  expect(result.summary).toContain("## Goal & open requests");
});
