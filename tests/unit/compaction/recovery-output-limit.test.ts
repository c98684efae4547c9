import {
  APICallError,
  type LanguageModelV4CallOptions,
  type LanguageModelV4StreamPart,
  type LanguageModelV4StreamResult,
} from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { createRecoveryMiddleware } from "@/lib/compaction/recovery";
import { computeBudget } from "@/lib/context/budget";
import { createEstimator, unitsFromProviderPrompt } from "@/lib/context/tokens";
import { COMPACTION_DEFAULTS } from "@/lib/env";
import { outputLimitToSend } from "@/lib/turn/model-call";

/**
 * A vLLM restarted with --max-model-len 8192 while Fold still budgets the window it looked up
 * before (32,768, cached up to an hour), for a model whose output limit an admin set to 8,192. vLLM (like OpenAI,
 * OpenRouter, Anthropic) refuses when prompt + max_tokens exceed the window.
 */
const SERVED = 8192;
const window = {
  contextWindow: 32_768,
  maxOutputTokens: 8192,
  // vLLM's listed max_model_len before the restart; an admin override sets only the output limit.
  source: "provider" as const,
  detail: { server: "vllm" as const, basis: "listed" as const },
  outputOverride: { modelLimit: null },
};
const budget = computeBudget(window, COMPACTION_DEFAULTS);
const estimator = createEstimator();

function streamed(): LanguageModelV4StreamResult {
  const parts: LanguageModelV4StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "ok" },
    { type: "text-end", id: "t" },
    {
      type: "finish",
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      },
    },
  ];
  return { stream: convertArrayToReadableStream(parts) };
}

/** vLLM's check: prompt + max_tokens must fit max_model_len. */
async function vllm(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
  const input = estimator.estimate(unitsFromProviderPrompt(options.prompt));
  const maxTokens = options.maxOutputTokens ?? 0;
  if (input + maxTokens > SERVED) {
    throw new APICallError({
      message: "Bad Request",
      url: "http://vllm:8000/v1/chat/completions",
      requestBodyValues: {},
      statusCode: 400,
      responseBody: JSON.stringify({
        object: "error",
        message: `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${SERVED} tokens and your request has ${input} input tokens (${maxTokens} > ${SERVED} - ${input}).`,
        type: "BadRequestError",
        code: 400,
      }),
      isRetryable: false,
    });
  }
  return streamed();
}

describe("recovery when the stated window cannot hold the output limit the turn asked for", () => {
  it("retries with an output limit that fits the stated window, so a short chat is answered", async () => {
    const sent = outputLimitToSend({ modelId: "local:qwen", window, budget });
    expect(sent).toBe(8192);
    const mock = new MockLanguageModelV4({ doStream: vllm });
    const model = wrapLanguageModel({
      model: mock,
      middleware: createRecoveryMiddleware({
        modelId: "local:qwen",
        budget,
        ratio: 1,
        estimator,
        keepRecentToolResults: 3,
        toolOverheadTokens: 0,
      }),
    });
    const prompt: LanguageModelV4CallOptions["prompt"] = [
      { role: "system", content: "You are Fold." },
      { role: "user", content: [{ type: "text", text: "Hello there, a short question." }] },
    ];
    const outcome = await Promise.resolve(model.doStream({ prompt, maxOutputTokens: sent })).then(
      () => "answered",
      (error: Error) => `${error.name}: ${error.message}`,
    );
    expect(outcome).toBe("answered");
    // The retry asked for no more than the stated window leaves the reply.
    const [first, retry] = mock.doStreamCalls.map((c) => c.maxOutputTokens ?? 0);
    expect(first).toBe(8192);
    expect(retry).toBeLessThanOrEqual(SERVED / 2);
  });
});
