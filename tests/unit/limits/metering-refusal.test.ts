import {
  APICallError,
  type LanguageModelV4Prompt,
  type LanguageModelV4StreamPart,
  type LanguageModelV4StreamResult,
} from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { createRecoveryMiddleware } from "@/lib/compaction/recovery";
import { createEstimator } from "@/lib/context/tokens";
import { meteredModel } from "@/lib/limits/metering";
import { BUDGET_8K } from "../compaction/histories";

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});

const OVERFLOW_TEXT =
  "This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens. Please reduce the length of the messages.";

function overflow400() {
  return new APICallError({
    message: "provider said 400",
    url: "https://provider.example/v1/chat/completions",
    requestBodyValues: {},
    statusCode: 400,
    responseBody: JSON.stringify({
      error: {
        message: OVERFLOW_TEXT,
        type: "invalid_request_error",
        code: "context_length_exceeded",
      },
    }),
    isRetryable: false,
  });
}

function refusedInStream(): LanguageModelV4StreamResult {
  const parts: LanguageModelV4StreamPart[] = [
    { type: "stream-start", warnings: [] },
    {
      type: "error",
      error: {
        message: OVERFLOW_TEXT,
        type: "invalid_request_error",
        code: "context_length_exceeded",
      },
    },
    { type: "finish", finishReason: { unified: "error", raw: undefined }, usage: usage(0, 0) },
  ];
  return { stream: convertArrayToReadableStream(parts) };
}

function answered(): LanguageModelV4StreamResult {
  const parts: LanguageModelV4StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "ok" },
    { type: "text-end", id: "t" },
    { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usage(3000, 10) },
  ];
  return { stream: convertArrayToReadableStream(parts) };
}

/** A long conversation, well over the window as Fold estimates it. */
function longPrompt(): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [{ role: "system", content: "You are Fold." }];
  for (let i = 0; i < 40; i++) {
    prompt.push({ role: "user", content: [{ type: "text", text: `question ${i} `.repeat(60) }] });
    prompt.push({
      role: "assistant",
      content: [{ type: "text", text: `answer ${i} `.repeat(60) }],
    });
  }
  prompt.push({ role: "user", content: [{ type: "text", text: "and now?" }] });
  return prompt;
}

/** The provider metered (as the turn's resolver does), then recovery around it (streamModelCall). */
async function chargedFor(first: () => Promise<LanguageModelV4StreamResult>) {
  const tokens: number[] = [];
  let calls = 0;
  const mock = new MockLanguageModelV4({
    doStream: async () => (calls++ === 0 ? first() : answered()),
  });
  const model = wrapLanguageModel({
    model: meteredModel(mock, (n) => tokens.push(n)),
    middleware: createRecoveryMiddleware({
      modelId: "fake:small",
      budget: BUDGET_8K,
      ratio: 1,
      estimator: createEstimator(),
      keepRecentToolResults: 3,
      toolOverheadTokens: 0,
      onRecovery: () => undefined,
    }),
  });
  const result = await model.doStream({ prompt: longPrompt() });
  const reader = result.stream.getReader();
  while (!(await reader.read()).done) {}
  expect(calls).toBe(2);
  return tokens;
}

describe("metering a prompt the provider refused as too long", () => {
  it("charges a refusal sent inside an opened stream as nothing, like the same refusal sent as a 400", async () => {
    const asStatus = await chargedFor(async () => {
      throw overflow400();
    });
    // The 400: only the trimmed retry is charged.
    expect(asStatus).toEqual([3010]);
    const inStream = await chargedFor(async () => refusedInStream());
    // The same refusal, in the stream's first event: the provider read nothing either.
    expect(inStream).toEqual(asStatus);
  });
});

it("still charges a stream that fails before its answer for another reason: the provider may have read the prompt", async () => {
  const tokens: number[] = [];
  const failing = new MockLanguageModelV4({
    doStream: async () => ({
      stream: convertArrayToReadableStream<LanguageModelV4StreamPart>([
        { type: "stream-start", warnings: [] },
        {
          type: "error",
          error: { message: "The server is overloaded.", type: "overloaded_error" },
        },
      ]),
    }),
  });
  const result = await meteredModel(failing, (n) => tokens.push(n)).doStream({
    prompt: longPrompt(),
  });
  const reader = result.stream.getReader();
  while (!(await reader.read()).done) {}
  expect(tokens).toHaveLength(1);
  expect(tokens[0]).toBeGreaterThan(1_000);
});
