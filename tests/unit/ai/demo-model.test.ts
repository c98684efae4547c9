import { APICallError, type LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { generateText, type ModelMessage, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createDemoModel, DEMO_CONTEXT_WINDOW, DEMO_MAX_OUTPUT_TOKENS } from "@/lib/ai/demo-model";
import { createEstimator } from "@/lib/context/tokens";

const instructions = "You are Fold's helpful assistant.";
const conversation: ModelMessage[] = [
  { role: "user", content: "My name is Ada and I am planning a trip to Lisbon in October." },
  { role: "assistant", content: "Lovely! October is a great month for Lisbon." },
  { role: "user", content: "Which neighbourhoods should I stay in for good food and walking?" },
];

const offline = () => createDemoModel({ chunkDelayMs: 0, estimator: createEstimator() });

async function collect(stream: ReadableStream<LanguageModelV4StreamPart>) {
  const parts: LanguageModelV4StreamPart[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return parts;
    parts.push(value);
  }
}

describe("createDemoModel", () => {
  it("identifies itself as the offline demo model", () => {
    const model = createDemoModel();
    expect(model.specificationVersion).toBe("v4");
    expect(model.provider).toBe("demo");
    expect(model.modelId).toBe("demo");
    expect(DEMO_CONTEXT_WINDOW).toBe(8192);
    expect(DEMO_MAX_OUTPUT_TOKENS).toBeGreaterThan(0);
  });

  it("streams through streamText with usage counted by the estimator", async () => {
    const result = streamText({ model: offline(), instructions, messages: conversation });
    const deltas: string[] = [];
    for await (const part of result.fullStream)
      if (part.type === "text-delta") deltas.push(part.text);

    const text = await result.text;
    const usage = await result.usage;
    const estimator = createEstimator();
    const prompt: ModelMessage[] = [{ role: "system", content: instructions }, ...conversation];

    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join("")).toBe(text);
    expect(usage.inputTokens).toBe(estimator.estimateModelMessages(prompt));
    expect(usage.outputTokens).toBe(estimator.countText(text));
    expect(usage.inputTokenDetails.cacheReadTokens).toBe(0);
    expect(await result.finishReason).toBe("stop");
  });

  it("emits the provider stream parts in protocol order", async () => {
    const { stream } = await offline().doStream({
      prompt: [{ role: "user", content: [{ type: "text", text: "Hello there, demo model." }] }],
    });
    const types = (await collect(stream)).map((p) => p.type);
    expect(types.slice(0, 3)).toEqual(["stream-start", "response-metadata", "text-start"]);
    expect(types.slice(-2)).toEqual(["text-end", "finish"]);
    expect(types.filter((t) => t === "text-delta").length).toBeGreaterThan(5);
  });

  it("gives the same answer to the same prompt, streamed or not", async () => {
    const a = await generateText({ model: offline(), instructions, messages: conversation });
    const b = await generateText({ model: offline(), instructions, messages: conversation });
    const streamed = streamText({ model: offline(), instructions, messages: conversation });
    expect(a.text).toBe(b.text);
    expect(await streamed.text).toBe(a.text);
    expect(a.usage).toEqual(b.usage);
  });

  it("answers in readable markdown that quotes the latest message and recalls an earlier one", async () => {
    const { text } = await generateText({ model: offline(), instructions, messages: conversation });
    const words = text.split(/\s+/).filter(Boolean).length;

    expect(words).toBeGreaterThanOrEqual(60);
    expect(words).toBeLessThanOrEqual(200);
    expect(text).toContain("Which neighbourhoods should I stay in");
    expect(text).toContain("My name is Ada and I am planning a trip to Lisbon");
    expect(text).toContain("turn 2");
    expect(text).toMatch(/^- /m);
  });

  it("says when it works from a summary, and recalls from it", async () => {
    const { text } = await generateText({
      model: offline(),
      messages: [
        {
          role: "user",
          content:
            "<conversation-summary>\n## Goal & open requests\n- Plan an October trip to Lisbon for Ada\n</conversation-summary>",
        },
        { role: "user", content: "What budget should I plan for?" },
      ],
    });
    expect(text).toContain("summary of earlier turns");
    expect(text).toContain("Plan an October trip to Lisbon for Ada");
  });

  it("rejects a prompt larger than its window like a real provider (400)", async () => {
    const huge: ModelMessage[] = [
      { role: "user", content: "lorem ipsum ".repeat(DEMO_CONTEXT_WINDOW) },
    ];
    const error = await generateText({ model: offline(), messages: huge, maxRetries: 0 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(APICallError.isInstance(error)).toBe(true);
    if (!APICallError.isInstance(error)) return;
    expect(error.statusCode).toBe(400);
    expect(error.isRetryable).toBe(false);
    expect(error.responseBody).toContain("context_length_exceeded");
    expect(error.message).toContain("maximum context length is 8192 tokens");
  });

  it("surfaces the overflow in a stream as an error part, before any text", async () => {
    const huge: ModelMessage[] = [
      { role: "user", content: "lorem ipsum ".repeat(DEMO_CONTEXT_WINDOW) },
    ];
    const reported: unknown[] = [];
    const result = streamText({
      model: offline(),
      messages: huge,
      maxRetries: 0,
      onError: ({ error }) => {
        reported.push(error);
      },
    });
    const parts: Array<{ type: string; error?: unknown }> = [];
    for await (const part of result.fullStream) parts.push(part);

    const failure = parts.find((p) => p.type === "error");
    expect(parts.some((p) => p.type === "text-delta")).toBe(false);
    expect(APICallError.isInstance(failure?.error)).toBe(true);
    expect(reported).toEqual([failure?.error]);
  });

  it("stops at maxOutputTokens with finish reason length", async () => {
    const result = await generateText({
      model: offline(),
      messages: conversation,
      maxOutputTokens: 12,
    });
    expect(result.finishReason).toBe("length");
    expect(result.usage.outputTokens).toBeLessThanOrEqual(12);
    expect(result.text.length).toBeGreaterThan(0);
  });

  it("accepts tools without calling them, and counts their schemas as input", async () => {
    const tools = {
      getWeather: tool({
        description: "Get the weather for a city",
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => ({ city, temperature: 21 }),
      }),
    };
    const withTools = await generateText({ model: offline(), messages: conversation, tools });
    const without = await generateText({ model: offline(), messages: conversation });
    expect(withTools.toolCalls).toEqual([]);
    expect(withTools.text).toBe(without.text);
    expect(withTools.usage.inputTokens ?? 0).toBeGreaterThan(without.usage.inputTokens ?? 0);
  });

  it("stops streaming when aborted", async () => {
    const controller = new AbortController();
    const model = createDemoModel({ chunkDelayMs: 5, estimator: createEstimator() });
    const full = (await generateText({ model, messages: conversation })).text;

    const result = streamText({ model, messages: conversation, abortSignal: controller.signal });
    const types: string[] = [];
    let streamed = "";
    for await (const part of result.fullStream) {
      types.push(part.type);
      if (part.type === "text-delta") {
        streamed += part.text;
        controller.abort();
      }
    }
    expect(types).toContain("abort");
    expect(types).not.toContain("finish");
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed.length).toBeLessThan(full.length);
  });

  it("errors its own stream with the abort reason", async () => {
    const controller = new AbortController();
    const { stream } = await createDemoModel({ chunkDelayMs: 50 }).doStream({
      prompt: [{ role: "user", content: [{ type: "text", text: "Tell me something." }] }],
      abortSignal: controller.signal,
    });
    const reader = stream.getReader();
    const seen: string[] = [];
    const reading = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        seen.push(value.type);
      }
    })();
    setTimeout(() => controller.abort(), 20);
    await expect(reading).rejects.toMatchObject({ name: "AbortError" });
    expect(seen).not.toContain("finish");
  });

  it("refuses to start when already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      offline().doGenerate({
        prompt: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
        abortSignal: controller.signal,
      }),
    ).rejects.toMatchObject({ name: "AbortError" });
  });
});
