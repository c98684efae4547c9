import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { generateText, simulateReadableStream, streamText } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { meteredModel } from "@/lib/limits/metering";

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

  it("counts a count the provider left out as zero", async () => {
    const tokens: number[] = [];
    const model = new MockLanguageModelV4({
      doGenerate: {
        content: [{ type: "text", text: "x" }],
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
    expect(tokens).toEqual([12]);
  });
});
