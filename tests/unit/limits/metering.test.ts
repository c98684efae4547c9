import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { generateText, simulateReadableStream, streamText } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { countTextTokens, MESSAGE_OVERHEAD_TOKENS } from "@/lib/context/tokens";
import { meteredModel, meteredResolver } from "@/lib/limits/metering";

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});

describe("meteredModel", () => {
  it("reports input plus output tokens of a generated answer", async () => {
    const tokens: number[] = [];
    const model = new MockLanguageModelV4({
      doGenerate: {
        content: [{ type: "text", text: "hello" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: usage(120, 30),
        warnings: [],
      },
    });
    await generateText({ model: meteredModel(model, (n) => tokens.push(n)), prompt: "hi" });
    expect(tokens).toEqual([150]);
  });

  it("reports a streamed answer's tokens once it finishes, and passes every part through", async () => {
    const tokens: number[] = [];
    const chunks: LanguageModelV4StreamPart[] = [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hel" },
      { type: "text-delta", id: "t", delta: "lo" },
      { type: "text-end", id: "t" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usage(900, 45) },
    ];
    const model = new MockLanguageModelV4({
      doStream: { stream: simulateReadableStream({ chunks }) },
    });
    const result = streamText({ model: meteredModel(model, (n) => tokens.push(n)), prompt: "hi" });
    expect(await result.text).toBe("Hello");
    expect(tokens).toEqual([945]);
  });

  it("a stream stopped before the provider's count is metered by Fold's estimate, once", async () => {
    const tokens: number[] = [];
    const stop = new AbortController();
    // A provider that writes two pieces, then nothing more until it is cut off.
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            controller.enqueue({ type: "text-start", id: "t" });
            controller.enqueue({ type: "text-delta", id: "t", delta: "Once upon a time" });
            controller.enqueue({ type: "text-delta", id: "t", delta: " there was a lighthouse" });
          },
        }),
      }),
    });
    const prompt = "Tell me a long story about a lighthouse keeper.";
    const result = streamText({
      model: meteredModel(model, (n) => tokens.push(n)),
      prompt,
      abortSignal: stop.signal,
    });
    for await (const text of result.textStream) {
      if (text.includes("lighthouse")) stop.abort();
    }
    await expect(result.text).rejects.toThrow();
    expect(tokens).toEqual([
      countTextTokens(prompt) +
        MESSAGE_OVERHEAD_TOKENS +
        countTextTokens("Once upon a time there was a lighthouse"),
    ]);
  });

  it("a stream stopped before the provider answered at all is metered by the prompt", async () => {
    const tokens: number[] = [];
    const stop = new AbortController();
    // A provider still reading a long prompt: no response yet when the user stops.
    const model = new MockLanguageModelV4({
      doStream: ({ abortSignal }) =>
        new Promise((_, reject) =>
          abortSignal?.addEventListener("abort", () => reject(new Error("aborted")), {
            once: true,
          }),
        ),
    });
    const prompt = "Summarize this long document for me, please.";
    const result = streamText({
      model: meteredModel(model, (n) => tokens.push(n)),
      prompt,
      abortSignal: stop.signal,
      onError: () => undefined,
    });
    setTimeout(() => stop.abort(), 20);
    await result.consumeStream();
    // The prompt as Fold estimates a request: its one message's text and framing.
    expect(tokens).toEqual([countTextTokens(prompt) + MESSAGE_OVERHEAD_TOKENS]);
  });

  it("a call begun after its stop was heard sends nothing and is not metered", async () => {
    const tokens: number[] = [];
    let called = 0;
    // As fetch does: an already aborted signal fails the request before anything is sent.
    const model = new MockLanguageModelV4({
      doStream: async ({ abortSignal }) => {
        called++;
        abortSignal?.throwIfAborted();
        throw new Error("sent without a stop");
      },
    });
    const result = streamText({
      model: meteredModel(model, (n) => tokens.push(n)),
      prompt: "A question the user stopped as it was sent.",
      abortSignal: AbortSignal.abort(),
      onError: () => undefined,
    });
    await result.consumeStream();
    expect(called).toBe(1);
    expect(tokens).toEqual([]);
  });

  it("a stream that fails mid-way without a count is metered by the estimate", async () => {
    const tokens: number[] = [];
    const parts: LanguageModelV4StreamPart[] = [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Partial answer" },
    ];
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          pull(controller) {
            const part = parts.shift();
            if (part) controller.enqueue(part);
            else controller.error(new Error("connection reset"));
          },
        }),
      }),
    });
    const result = streamText({
      model: meteredModel(model, (n) => tokens.push(n)),
      prompt: "hi",
      onError: () => undefined,
    });
    await result.consumeStream();
    expect(tokens).toEqual([
      countTextTokens("hi") + MESSAGE_OVERHEAD_TOKENS + countTextTokens("Partial answer"),
    ]);
  });

  it("estimates a count the provider left out, so a call without usage is never free", async () => {
    const tokens: number[] = [];
    const model = new MockLanguageModelV4({
      doGenerate: {
        content: [{ type: "text", text: "A reply of several words." }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: {
            total: 12,
            noCache: undefined,
            cacheRead: undefined,
            cacheWrite: undefined,
          },
          outputTokens: { total: undefined, text: undefined, reasoning: undefined },
        },
        warnings: [],
      },
    });
    await generateText({ model: meteredModel(model, (n) => tokens.push(n)), prompt: "hi" });
    expect(tokens).toEqual([12 + countTextTokens("A reply of several words.")]);
  });

  it("estimates a generated tool call's input when the provider reports no output count", async () => {
    const tokens: number[] = [];
    const input = JSON.stringify({ url: "https://example.com/a-rather-long-path/for-counting" });
    const model = new MockLanguageModelV4({
      doGenerate: {
        content: [{ type: "tool-call", toolCallId: "c1", toolName: "fetch_url", input }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: {
          inputTokens: {
            total: 12,
            noCache: undefined,
            cacheRead: undefined,
            cacheWrite: undefined,
          },
          outputTokens: { total: undefined, text: undefined, reasoning: undefined },
        },
        warnings: [],
      },
    });
    await generateText({ model: meteredModel(model, (n) => tokens.push(n)), prompt: "hi" });
    expect(tokens).toEqual([12 + countTextTokens(input)]);
  });

  it("a stream that finishes without any usage (a server that sends none) is metered by the estimate", async () => {
    const tokens: number[] = [];
    const none = {
      inputTokens: {
        total: undefined,
        noCache: undefined,
        cacheRead: undefined,
        cacheWrite: undefined,
      },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
    };
    const chunks: LanguageModelV4StreamPart[] = [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Rivers run to the sea." },
      { type: "text-end", id: "t" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: none },
    ];
    const model = new MockLanguageModelV4({
      doStream: { stream: simulateReadableStream({ chunks }) },
    });
    const prompt = "Explain rivers in one line.";
    const result = streamText({ model: meteredModel(model, (n) => tokens.push(n)), prompt });
    await result.consumeStream();
    expect(tokens).toEqual([
      countTextTokens(prompt) + MESSAGE_OVERHEAD_TOKENS + countTextTokens("Rivers run to the sea."),
    ]);
  });
});

describe("meteredResolver", () => {
  it("resolves a model whose bursts reach the turn joined, metered once by the provider's count", async () => {
    const tokens: number[] = [];
    const pieces = Array.from({ length: 40 }, (_, i) => `piece ${i}; `);
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            controller.enqueue({ type: "text-start", id: "t" });
            for (const delta of pieces) controller.enqueue({ type: "text-delta", id: "t", delta });
            controller.enqueue({ type: "text-end", id: "t" });
            controller.enqueue({
              type: "finish",
              finishReason: { unified: "stop", raw: "stop" },
              usage: usage(700, 80),
            });
            controller.close();
          },
        }),
      }),
    });
    const resolve = meteredResolver(
      () => model,
      (n) => tokens.push(n),
    );
    const deltas: string[] = [];
    const result = streamText({ model: resolve("fake:model"), prompt: "hi" });
    for await (const text of result.textStream) deltas.push(text);
    expect(deltas.join("")).toBe(pieces.join(""));
    expect(deltas.length).toBeLessThan(pieces.length / 4);
    expect(tokens).toEqual([780]);
  });
});
