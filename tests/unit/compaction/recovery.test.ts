import {
  APICallError,
  type LanguageModelV4CallOptions,
  type LanguageModelV4GenerateResult,
  type LanguageModelV4Prompt,
  type LanguageModelV4StreamPart,
  type LanguageModelV4StreamResult,
} from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { describe, expect, it, vi } from "vitest";
import { ContextOverflowError } from "@/lib/compaction/overflow";
import {
  createRecoveryMiddleware,
  type RecoveryEvent,
  type RecoveryOptions,
} from "@/lib/compaction/recovery";
import { type Budget, computeBudget } from "@/lib/context/budget";
import { createEstimator, unitsFromProviderPrompt } from "@/lib/context/tokens";
import { outputLimitToSend } from "@/lib/turn/model-call";
import { DEFAULT_RATIOS } from "./histories";

/**
 * Recovery (DESIGN §10) as a middleware around a mock model: an overflow is
 * trimmed and retried exactly once, anything else is left alone, a second
 * overflow becomes a clear message.
 */

const MODEL_ID = "fake:small";
const WINDOW = 8192;

const BUDGET: Budget = computeBudget(
  { contextWindow: WINDOW, maxOutputTokens: null },
  DEFAULT_RATIOS,
);

const VOCABULARY = [
  "context",
  "window",
  "summary",
  "budget",
  "token",
  "result",
  "page",
  "section",
  "archive",
  "release",
];

/** Readable filler of about `chars` characters, different per seed. */
function filler(chars: number, seed: number): string {
  const words: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    const word = `${VOCABULARY[(i * 7 + seed) % VOCABULARY.length]}${(i + seed) % 13}`;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(" ").slice(0, chars);
}

/** A tool loop in progress: system, user, then `steps` assistant tool calls with big results. */
function toolLoopPrompt(steps = 5, resultChars = 12_000): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [
    { role: "system", content: "You are Fold, a helpful assistant." },
    {
      role: "user",
      content: [{ type: "text", text: "Read these pages and compare what they say." }],
    },
  ];
  for (let i = 0; i < steps; i++) {
    const toolCallId = `call_${i}`;
    prompt.push({
      role: "assistant",
      content: [
        ...(i % 2 === 0 ? [{ type: "text" as const, text: `Fetching page ${i}.` }] : []),
        {
          type: "tool-call",
          toolCallId,
          toolName: "fetch_url",
          input: { url: `https://example.com/${i}` },
        },
      ],
    });
    prompt.push({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId,
          toolName: "fetch_url",
          output:
            i % 2 === 0
              ? { type: "text", value: filler(resultChars, i) }
              : {
                  type: "json",
                  value: { url: `https://example.com/${i}`, text: filler(resultChars, i) },
                },
        },
      ],
    });
  }
  return prompt;
}

function apiError(statusCode: number, body: Record<string, unknown>): APICallError {
  return new APICallError({
    message: `provider said ${statusCode}`,
    url: "https://provider.example/v1/chat/completions",
    requestBodyValues: {},
    statusCode,
    responseBody: JSON.stringify(body),
    isRetryable: statusCode === 429 || statusCode >= 500,
  });
}

/** OpenAI's real context_length_exceeded 400. */
function overflowError(reportedTokens = 9100): APICallError {
  return apiError(400, {
    error: {
      message: `This model's maximum context length is ${WINDOW} tokens. However, your messages resulted in ${reportedTokens} tokens. Please reduce the length of the messages.`,
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    },
  });
}

const NOT_OVERFLOWS: Array<[string, APICallError]> = [
  [
    "429 rate limit",
    apiError(429, {
      error: {
        message: "Rate limit reached for requests",
        type: "requests",
        param: null,
        code: "rate_limit_exceeded",
      },
    }),
  ],
  [
    "500 server error",
    apiError(500, {
      error: {
        message: "The server had an error while processing your request.",
        type: "server_error",
        param: null,
        code: null,
      },
    }),
  ],
  [
    "401 bad key",
    apiError(401, {
      error: {
        message: "Incorrect API key provided.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_api_key",
      },
    }),
  ],
];

function usage(input: number, output: number): LanguageModelV4GenerateResult["usage"] {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

function generated(
  finish: "stop" | "length",
  input = 2000,
  output = 50,
): LanguageModelV4GenerateResult {
  return {
    content: [{ type: "text", text: "An answer." }],
    finishReason: { unified: finish, raw: finish },
    usage: usage(input, output),
    warnings: [],
  };
}

function streamed(text = "An answer."): LanguageModelV4StreamResult {
  const parts: LanguageModelV4StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: text },
    { type: "text-end", id: "t" },
    { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usage(2000, 4) },
  ];
  return { stream: convertArrayToReadableStream(parts) };
}

/** Fails the first calls with `errors` in turn, then answers. */
function failingThen<T>(errors: unknown[], answer: () => T) {
  let calls = 0;
  return async () => {
    const error = errors[calls++];
    if (error !== undefined) throw error;
    return answer();
  };
}

function setup(
  mock: MockLanguageModelV4,
  overrides: Partial<RecoveryOptions> = {},
): {
  model: ReturnType<typeof wrapLanguageModel>;
  events: RecoveryEvent[];
  onRecovery: ReturnType<typeof vi.fn>;
  estimate: (prompt: LanguageModelV4Prompt) => number;
} {
  const events: RecoveryEvent[] = [];
  const onRecovery = vi.fn((event: RecoveryEvent) => {
    events.push(event);
  });
  const estimator = createEstimator();
  const model = wrapLanguageModel({
    model: mock,
    middleware: createRecoveryMiddleware({
      modelId: MODEL_ID,
      budget: BUDGET,
      ratio: 1,
      estimator,
      keepRecentToolResults: 3,
      toolOverheadTokens: 150,
      onRecovery,
      ...overrides,
    }),
  });
  const counter = createEstimator();
  return {
    model,
    events,
    onRecovery,
    estimate: (prompt) => counter.estimate(unitsFromProviderPrompt(prompt)),
  };
}

function callOptions(
  prompt: LanguageModelV4Prompt,
  extra: Partial<LanguageModelV4CallOptions> = {},
): LanguageModelV4CallOptions {
  return { prompt, ...extra };
}

/** Every tool call has exactly one result with the same id, in a later message. */
function expectPairsIntact(prompt: LanguageModelV4Prompt, original: LanguageModelV4Prompt): void {
  const calls: Array<{ id: string; at: number }> = [];
  const results: Array<{ id: string; at: number }> = [];
  prompt.forEach((message, at) => {
    if (typeof message.content === "string") return;
    for (const part of message.content) {
      if (part.type === "tool-call") calls.push({ id: part.toolCallId, at });
      if (part.type === "tool-result") results.push({ id: part.toolCallId, at });
    }
  });
  const originalCalls = original.flatMap((m) =>
    typeof m.content === "string"
      ? []
      : m.content.flatMap((p) => (p.type === "tool-call" ? [p.toolCallId] : [])),
  );
  expect(calls.map((c) => c.id)).toEqual(originalCalls);
  for (const call of calls) {
    const matching = results.filter((r) => r.id === call.id);
    expect(matching, `results for ${call.id}`).toHaveLength(1);
    expect(matching[0]?.at).toBeGreaterThan(call.at);
  }
  expect(results).toHaveLength(calls.length);
}

async function drain(result: LanguageModelV4StreamResult): Promise<string> {
  let text = "";
  const reader = result.stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    if (value.type === "text-delta") text += value.delta;
  }
}

describe("recovery middleware: overflow on doStream", () => {
  it("retries exactly once with a smaller prompt and reports the recovery once", async () => {
    const mock = new MockLanguageModelV4({
      doStream: failingThen([overflowError(9100)], () => streamed("Recovered.")),
    });
    const { model, events, onRecovery, estimate } = setup(mock);
    const prompt = toolLoopPrompt();

    const result = await model.doStream(callOptions(prompt));
    expect(await drain(result)).toBe("Recovered.");

    expect(mock.doStreamCalls).toHaveLength(2);
    const [first, retry] = mock.doStreamCalls;
    if (!first || !retry) throw new Error("expected two calls");
    expect(first.prompt).toEqual(prompt);
    const before = estimate(first.prompt);
    const after = estimate(retry.prompt);
    expect(after).toBeLessThan(before);
    // Trimmed toward the target, not just nudged.
    expect(after).toBeLessThanOrEqual(BUDGET.target);

    expect(onRecovery).toHaveBeenCalledTimes(1);
    expect(events[0]).toEqual({
      kind: "overflow",
      tokensBefore: before,
      tokensAfter: after,
      reportedTokens: 9100,
      statedWindow: null,
    });
  });

  it("trims the retry for the window the provider states when it is smaller than the budget's", async () => {
    const stated = WINDOW / 4;
    const refusal = apiError(400, {
      error: {
        message: `This model's maximum context length is ${stated} tokens. However, your messages resulted in 9100 tokens.`,
        code: "context_length_exceeded",
      },
    });
    const mock = new MockLanguageModelV4({
      doStream: failingThen([refusal], () => streamed("Recovered.")),
    });
    const { model, events, estimate } = setup(mock);

    await drain(await model.doStream(callOptions(toolLoopPrompt())));

    const retry = mock.doStreamCalls[1];
    if (!retry) throw new Error("no retry");
    // The target a window of that size would have: a quarter of the budget's.
    expect(estimate(retry.prompt)).toBeLessThanOrEqual(BUDGET.target / 4);
    expect(events[0]).toMatchObject({ kind: "overflow", statedWindow: stated });
  });

  it("keeps every tool call paired with its result in the retried prompt", async () => {
    const mock = new MockLanguageModelV4({
      doStream: failingThen([overflowError()], () => streamed()),
    });
    const { model } = setup(mock);
    const prompt = toolLoopPrompt(7, 9_000);
    await drain(await model.doStream(callOptions(prompt)));

    const retry = mock.doStreamCalls[1];
    if (!retry) throw new Error("no retry");
    expect(retry.prompt).toHaveLength(prompt.length);
    expect(retry.prompt.map((m) => m.role)).toEqual(prompt.map((m) => m.role));
    expectPairsIntact(retry.prompt, prompt);
    // The latest request and the system prompt travel untouched.
    expect(retry.prompt[0]).toEqual(prompt[0]);
    expect(retry.prompt[1]).toEqual(prompt[1]);
  });

  it.each(NOT_OVERFLOWS)("does not retry a %s", async (_name, error) => {
    const mock = new MockLanguageModelV4({
      doStream: failingThen([error], () => streamed()),
    });
    const { model, onRecovery } = setup(mock);
    await expect(model.doStream(callOptions(toolLoopPrompt()))).rejects.toBe(error);
    expect(mock.doStreamCalls).toHaveLength(1);
    expect(onRecovery).not.toHaveBeenCalled();
  });

  it("gives up after a second overflow with a message that names the model", async () => {
    const second = overflowError(8500);
    const mock = new MockLanguageModelV4({
      doStream: failingThen([overflowError(), second, overflowError()], () => streamed()),
    });
    const { model, onRecovery } = setup(mock);
    const failure = await model.doStream(callOptions(toolLoopPrompt())).then(
      () => null,
      (error: unknown) => error,
    );
    expect(ContextOverflowError.isInstance(failure)).toBe(true);
    expect((failure as Error).message).toBe(
      `This conversation no longer fits ${MODEL_ID} — compact it or start a new chat.`,
    );
    expect((failure as Error).cause).toBe(second);
    // Exactly one retry, never a third request.
    expect(mock.doStreamCalls).toHaveLength(2);
    expect(onRecovery).toHaveBeenCalledTimes(1);
  });

  it("passes a different error on the retry through unchanged", async () => {
    const rateLimit = NOT_OVERFLOWS[0]?.[1];
    const mock = new MockLanguageModelV4({
      doStream: failingThen([overflowError(), rateLimit], () => streamed()),
    });
    const { model } = setup(mock);
    await expect(model.doStream(callOptions(toolLoopPrompt()))).rejects.toBe(rateLimit);
    expect(mock.doStreamCalls).toHaveLength(2);
  });

  it("still retries when the bookkeeping callback fails", async () => {
    const mock = new MockLanguageModelV4({
      doStream: failingThen([overflowError()], () => streamed("Still here.")),
    });
    const { model } = setup(mock, {
      onRecovery: () => {
        throw new Error("database down");
      },
    });
    expect(await drain(await model.doStream(callOptions(toolLoopPrompt())))).toBe("Still here.");
    expect(mock.doStreamCalls).toHaveLength(2);
  });
});

/** A stream opened with a 200 whose first event is an error (`error`, after the opening parts). */
function refusedInStream(error: unknown): LanguageModelV4StreamResult {
  const parts: LanguageModelV4StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "error", error },
    { type: "finish", finishReason: { unified: "error", raw: undefined }, usage: usage(0, 0) },
  ];
  return { stream: convertArrayToReadableStream(parts) };
}

/** Every part a stream gives, in order. */
async function partsOf(result: LanguageModelV4StreamResult): Promise<LanguageModelV4StreamPart[]> {
  const parts: LanguageModelV4StreamPart[] = [];
  const reader = result.stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return parts;
    parts.push(value);
  }
}

/** Answers each call with the next of `results` (the last one again once they run out). */
function inTurn(results: Array<() => LanguageModelV4StreamResult>) {
  let calls = 0;
  return async () =>
    (results[Math.min(calls++, results.length - 1)] as () => LanguageModelV4StreamResult)();
}

/** The error object an OpenAI-compatible stream's error event carries, as the provider parsed it. */
const STREAMED_OVERFLOW = {
  message:
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens. Please reduce the length of the messages.",
  type: "invalid_request_error",
  param: "messages",
  code: "context_length_exceeded",
};

describe("recovery middleware: a refusal inside an opened stream", () => {
  it("retries once with a smaller prompt when the stream's first event says the prompt is too long", async () => {
    const mock = new MockLanguageModelV4({
      doStream: inTurn([() => refusedInStream(STREAMED_OVERFLOW), () => streamed("Recovered.")]),
    });
    const { model, events, estimate } = setup(mock);
    const prompt = toolLoopPrompt();
    expect(await drain(await model.doStream(callOptions(prompt)))).toBe("Recovered.");

    expect(mock.doStreamCalls).toHaveLength(2);
    const retry = mock.doStreamCalls[1];
    if (!retry) throw new Error("no retry");
    expect(estimate(retry.prompt)).toBeLessThanOrEqual(BUDGET.target);
    // The provider's count and window, read from the streamed refusal as from a 400's body.
    expect(events).toEqual([
      expect.objectContaining({ kind: "overflow", reportedTokens: 9100, statedWindow: null }),
    ]);
  });

  it("reads a refusal whose event does not parse as a chunk (the error says what it held)", async () => {
    const unparsed = new Error(
      `Type validation failed: Value: {"object":"error","message":"The decoder prompt (length 9000) is longer than the maximum model length of 4096."}.`,
    );
    const mock = new MockLanguageModelV4({
      doStream: inTurn([() => refusedInStream(unparsed), () => streamed("Recovered.")]),
    });
    const { model, events } = setup(mock);
    expect(await drain(await model.doStream(callOptions(toolLoopPrompt())))).toBe("Recovered.");
    expect(events).toEqual([
      expect.objectContaining({ kind: "overflow", reportedTokens: 9000, statedWindow: 4096 }),
    ]);
  });

  it("leaves another error in the stream alone, and gives every part in order", async () => {
    const overloaded = { message: "Overloaded", type: "overloaded_error" };
    const mock = new MockLanguageModelV4({ doStream: inTurn([() => refusedInStream(overloaded)]) });
    const { model, onRecovery } = setup(mock);
    const parts = await partsOf(await model.doStream(callOptions(toolLoopPrompt())));
    expect(parts.map((p) => p.type)).toEqual(["stream-start", "error", "finish"]);
    expect(parts[1]).toEqual({ type: "error", error: overloaded });
    expect(mock.doStreamCalls).toHaveLength(1);
    expect(onRecovery).not.toHaveBeenCalled();
  });

  it("does not ask again once the reply has begun, whatever an error later says", async () => {
    const late: LanguageModelV4StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "response-metadata", id: "r-1" },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Half an ans" },
      { type: "error", error: STREAMED_OVERFLOW },
    ];
    const mock = new MockLanguageModelV4({
      doStream: inTurn([() => ({ stream: convertArrayToReadableStream(late) })]),
    });
    const { model, onRecovery } = setup(mock);
    expect(await partsOf(await model.doStream(callOptions(toolLoopPrompt())))).toEqual(late);
    expect(mock.doStreamCalls).toHaveLength(1);
    expect(onRecovery).not.toHaveBeenCalled();
  });

  it("gives up with the clear message when the retry is refused in its stream too", async () => {
    const mock = new MockLanguageModelV4({
      doStream: inTurn([() => refusedInStream(STREAMED_OVERFLOW)]),
    });
    const { model, onRecovery } = setup(mock);
    const failure = await model.doStream(callOptions(toolLoopPrompt())).then(
      () => null,
      (error: unknown) => error,
    );
    expect(ContextOverflowError.isInstance(failure)).toBe(true);
    expect(mock.doStreamCalls).toHaveLength(2);
    expect(onRecovery).toHaveBeenCalledTimes(1);
  });

  it("a stream that fails before its reply begins fails the same way, after what it sent", async () => {
    const dropped = new Error("terminated");
    let opened = false;
    const mock = new MockLanguageModelV4({
      doStream: inTurn([
        () => ({
          stream: new ReadableStream<LanguageModelV4StreamPart>({
            pull(controller) {
              if (opened) throw dropped;
              opened = true;
              controller.enqueue({ type: "stream-start", warnings: [] });
            },
          }),
        }),
      ]),
    });
    const { model } = setup(mock);
    const reader = (await model.doStream(callOptions(toolLoopPrompt()))).stream.getReader();
    expect(await reader.read()).toEqual({
      done: false,
      value: { type: "stream-start", warnings: [] },
    });
    await expect(reader.read()).rejects.toBe(dropped);
    expect(mock.doStreamCalls).toHaveLength(1);
  });
});

describe("recovery middleware: doGenerate", () => {
  it("retries an overflow exactly once with a smaller prompt", async () => {
    const mock = new MockLanguageModelV4({
      doGenerate: failingThen([overflowError()], () => generated("stop")),
    });
    const { model, onRecovery, estimate } = setup(mock);
    const result = await model.doGenerate(callOptions(toolLoopPrompt()));
    expect(result.finishReason.unified).toBe("stop");
    expect(mock.doGenerateCalls).toHaveLength(2);
    const [first, retry] = mock.doGenerateCalls;
    if (!first || !retry) throw new Error("expected two calls");
    expect(estimate(retry.prompt)).toBeLessThan(estimate(first.prompt));
    expectPairsIntact(retry.prompt, first.prompt);
    expect(onRecovery).toHaveBeenCalledTimes(1);
    expect(onRecovery.mock.calls[0]?.[0]).toMatchObject({ kind: "overflow" });
  });

  it.each(NOT_OVERFLOWS)("does not retry a %s", async (_name, error) => {
    const mock = new MockLanguageModelV4({
      doGenerate: failingThen([error], () => generated("stop")),
    });
    const { model, onRecovery } = setup(mock);
    await expect(model.doGenerate(callOptions(toolLoopPrompt()))).rejects.toBe(error);
    expect(mock.doGenerateCalls).toHaveLength(1);
    expect(onRecovery).not.toHaveBeenCalled();
  });

  it("gives up after a second overflow with the clear message", async () => {
    const mock = new MockLanguageModelV4({
      doGenerate: failingThen([overflowError(), overflowError()], () => generated("stop")),
    });
    const { model } = setup(mock);
    await expect(model.doGenerate(callOptions(toolLoopPrompt()))).rejects.toThrow(
      `This conversation no longer fits ${MODEL_ID} — compact it or start a new chat.`,
    );
    expect(mock.doGenerateCalls).toHaveLength(2);
  });

  it("retries once when the reply was cut short by the window (finishReason length)", async () => {
    // 8,000 in + 180 out: the reply ran into the end of the 8,192-token window.
    const mock = new MockLanguageModelV4({
      doGenerate: [generated("length", 8000, 180), generated("stop", 3000, 300)],
    });
    const { model, onRecovery, estimate } = setup(mock);
    const result = await model.doGenerate(callOptions(toolLoopPrompt()));
    expect(result.finishReason.unified).toBe("stop");
    expect(mock.doGenerateCalls).toHaveLength(2);
    const [first, retry] = mock.doGenerateCalls;
    if (!first || !retry) throw new Error("expected two calls");
    expect(estimate(retry.prompt)).toBeLessThan(estimate(first.prompt));
    expectPairsIntact(retry.prompt, first.prompt);
    expect(onRecovery).toHaveBeenCalledTimes(1);
    expect(onRecovery.mock.calls[0]?.[0]).toMatchObject({ kind: "length", reportedTokens: null });
  });

  it("does not retry a length stop caused by the caller's own maxOutputTokens", async () => {
    // Also at the window's end, but the caller asked for at most 192 tokens and got them.
    const cut = generated("length", 8000, 192);
    const mock = new MockLanguageModelV4({ doGenerate: [cut, generated("stop")] });
    const { model, onRecovery } = setup(mock);
    const result = await model.doGenerate(callOptions(toolLoopPrompt(), { maxOutputTokens: 192 }));
    expect(result).toBe(cut);
    expect(mock.doGenerateCalls).toHaveLength(1);
    expect(onRecovery).not.toHaveBeenCalled();
  });

  it("does not retry a length stop far from the window's end", async () => {
    const cut = generated("length", 1000, 200);
    const mock = new MockLanguageModelV4({ doGenerate: [cut, generated("stop")] });
    const { model, onRecovery } = setup(mock);
    expect(await model.doGenerate(callOptions(toolLoopPrompt()))).toBe(cut);
    expect(mock.doGenerateCalls).toHaveLength(1);
    expect(onRecovery).not.toHaveBeenCalled();
  });

  it("gives up with the clear message when the retried reply is cut short again", async () => {
    const mock = new MockLanguageModelV4({
      doGenerate: [generated("length", 8000, 180), generated("length", 8100, 92)],
    });
    const { model } = setup(mock);
    await expect(model.doGenerate(callOptions(toolLoopPrompt()))).rejects.toThrow(
      `This conversation no longer fits ${MODEL_ID} — compact it or start a new chat.`,
    );
    expect(mock.doGenerateCalls).toHaveLength(2);
  });
});

describe("recovery middleware: a smaller window the provider states", () => {
  it("retries with an output limit that fits the stated window, so a short chat is answered", async () => {
    // A vLLM restarted with --max-model-len 8192 while Fold still budgets the 32,768 it listed
    // before (cached up to an hour), for a model whose output limit an admin set to 8,192. vLLM
    // refuses when prompt + max_tokens pass its window.
    const served = 8192;
    const window = {
      contextWindow: 32_768,
      maxOutputTokens: 8192,
      source: "provider" as const,
      detail: { server: "vllm" as const, basis: "listed" as const },
      outputOverride: { modelLimit: null },
    };
    const budget = computeBudget(window, DEFAULT_RATIOS);
    const sent = outputLimitToSend({ modelId: "local:qwen", window, budget });
    expect(sent).toBe(8192);
    const counter = createEstimator();
    const mock = new MockLanguageModelV4({
      doStream: async (options) => {
        const input = counter.estimate(unitsFromProviderPrompt(options.prompt));
        const maxTokens = options.maxOutputTokens ?? 0;
        if (input + maxTokens > served) {
          throw apiError(400, {
            object: "error",
            message: `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${served} tokens and your request has ${input} input tokens (${maxTokens} > ${served} - ${input}).`,
            type: "BadRequestError",
            code: 400,
          });
        }
        return streamed();
      },
    });
    const { model } = setup(mock, { modelId: "local:qwen", budget, toolOverheadTokens: 0 });
    const prompt: LanguageModelV4Prompt = [
      { role: "system", content: "You are Fold." },
      { role: "user", content: [{ type: "text", text: "Hello there, a short question." }] },
    ];
    const outcome = await Promise.resolve(
      model.doStream(callOptions(prompt, { maxOutputTokens: sent })),
    ).then(
      () => "answered",
      (error: Error) => `${error.name}: ${error.message}`,
    );
    expect(outcome).toBe("answered");
    // The retry asked for no more than the stated window leaves the reply.
    const [first, retry] = mock.doStreamCalls.map((c) => c.maxOutputTokens ?? 0);
    expect(first).toBe(8192);
    expect(retry).toBeLessThanOrEqual(served / 2);
  });
});
