import type {
  LanguageModelV4FunctionTool,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import { generateText, isStepCount, type ModelMessage, streamText } from "ai";
import { describe, expect, it } from "vitest";
import { createDemoModel } from "@/lib/ai/demo-model";
import { builtinTools, currentTime } from "@/lib/ai/tools";
import { createEstimator } from "@/lib/context/tokens";
import { fakeLookup, recordingFetch } from "./tools/fetch-doubles";

const NOW = new Date("2024-03-15T12:30:45.678Z");
const now = () => NOW;
const offline = () => createDemoModel({ chunkDelayMs: 0, estimator: createEstimator() });
const tools = () => builtinTools({ currentTime: { now }, fetchUrl: { allowPrivate: false } });
const ask = (content: string): ModelMessage[] => [{ role: "user", content }];
/** fetch_url as a provider receives it, for calling the model directly. */
const fetchUrlTool: LanguageModelV4FunctionTool = {
  type: "function",
  name: "fetch_url",
  inputSchema: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
};

async function collect(stream: ReadableStream<LanguageModelV4StreamPart>) {
  const parts: LanguageModelV4StreamPart[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return parts;
    parts.push(value);
  }
}

describe("the demo model in the tool loop", () => {
  it("asks current_time for the time, then answers with the result", async () => {
    const result = streamText({
      model: offline(),
      messages: ask("What time is it?"),
      tools: tools(),
      stopWhen: isStepCount(5),
    });
    const steps = await result.steps;
    const [call, answer] = steps;
    const clock = currentTime("UTC", now);
    const estimator = createEstimator();

    expect(steps).toHaveLength(2);
    expect(call?.finishReason).toBe("tool-calls");
    expect(call?.toolCalls).toEqual([
      expect.objectContaining({ toolName: "current_time", input: {} }),
    ]);
    expect(call?.toolResults[0]?.output).toEqual(clock);
    expect(answer?.finishReason).toBe("stop");
    expect(answer?.toolCalls).toEqual([]);
    expect(answer?.text).toContain(clock.formatted);
    expect(answer?.text).toContain(clock.iso);
    expect(await result.text).toBe(answer?.text);

    expect(call?.usage.outputTokens).toBe(estimator.countText("{}"));
    expect(answer?.usage.outputTokens).toBe(estimator.countText(answer?.text ?? ""));
    for (const step of steps) {
      expect(step.usage.inputTokens).toBeGreaterThan(0);
      expect(step.usage.outputTokens).toBeGreaterThan(0);
    }
    // The call and its result are part of the second step's prompt.
    expect(answer?.usage.inputTokens ?? 0).toBeGreaterThan(call?.usage.inputTokens ?? 0);
  });

  it("streams a tool call as input parts, then the call, and finishes with tool-calls", async () => {
    const prompt: LanguageModelV4Prompt = [
      { role: "user", content: [{ type: "text", text: "Summarize https://example.com/post." }] },
    ];
    const { stream } = await offline().doStream({ prompt, tools: [fetchUrlTool] });
    const parts = await collect(stream);
    const again = await collect((await offline().doStream({ prompt, tools: [] })).stream);

    expect(parts.map((p) => p.type)).toEqual([
      "stream-start",
      "response-metadata",
      "tool-input-start",
      "tool-input-delta",
      "tool-input-end",
      "tool-call",
      "finish",
    ]);
    const toolCall = parts.find((p) => p.type === "tool-call");
    expect(toolCall).toMatchObject({
      toolName: "fetch_url",
      input: JSON.stringify({ url: "https://example.com/post" }),
    });
    const id = toolCall?.type === "tool-call" ? toolCall.toolCallId : undefined;
    expect(parts.filter((p) => "id" in p && p.type.startsWith("tool-input"))).toEqual([
      { type: "tool-input-start", id, toolName: "fetch_url" },
      { type: "tool-input-delta", id, delta: JSON.stringify({ url: "https://example.com/post" }) },
      { type: "tool-input-end", id },
    ]);
    expect(parts.at(-1)).toMatchObject({ finishReason: { unified: "tool-calls" } });
    // Without the tool on offer, the same prompt gets a text reply.
    expect(again.some((p) => p.type === "tool-call")).toBe(false);
    expect(again.some((p) => p.type === "text-delta")).toBe(true);
  });

  it("gives the same tool call id to the same prompt, streamed or not", async () => {
    const run = () =>
      generateText({ model: offline(), messages: ask("What day is it?"), tools: tools() });
    const [a, b] = await Promise.all([run(), run()]);
    expect(a.toolCalls[0]?.toolName).toBe("current_time");
    expect(a.toolCalls[0]?.toolCallId).toBe(b.toolCalls[0]?.toolCallId);
    expect(a.finishReason).toBe("tool-calls");
  });

  it("reports a refused fetch instead of making it up", async () => {
    const result = streamText({
      model: offline(),
      messages: ask("Please read http://127.0.0.1/ and tell me what it says."),
      tools: tools(),
      stopWhen: isStepCount(5),
    });
    const steps = await result.steps;

    expect(steps).toHaveLength(2);
    expect(steps[0]?.toolCalls).toEqual([
      expect.objectContaining({ toolName: "fetch_url", input: { url: "http://127.0.0.1/" } }),
    ]);
    const text = await result.text;
    expect(text).toContain("The fetch of http://127.0.0.1/ failed");
    expect(text).toContain("Refused to fetch http://127.0.0.1/");
    expect(text).toContain("loopback");
  });

  it("quotes a fetched page's title and the opening of its text", async () => {
    const body = "Lisbon is a city of seven hills. ".repeat(20);
    const fetch = recordingFetch(
      () =>
        new Response(`<html><head><title>Visiting Lisbon</title></head><body><p>${body}</p>`, {
          headers: { "content-type": "text/html; charset=utf-8" },
        }),
    );
    const result = streamText({
      model: offline(),
      messages: ask("What does https://travel.example/lisbon say?"),
      tools: builtinTools({
        fetchUrl: { fetch, lookup: fakeLookup({ "travel.example": ["93.184.216.34"] }) },
      }),
      stopWhen: isStepCount(5),
    });
    const text = await result.text;

    expect(fetch.calls).toEqual(["https://travel.example/lisbon"]);
    expect(text).toContain("“Visiting Lisbon”");
    expect(text).toContain("HTTP 200");
    expect(text).toContain(body.slice(0, 150).trim());
    expect(text).not.toContain(body.trim());
  });

  it("answers in plain text, as before, when no tools are offered", async () => {
    const withoutTools = streamText({ model: offline(), messages: ask("What time is it?") });
    const steps = await withoutTools.steps;
    expect(steps).toHaveLength(1);
    expect(steps[0]?.toolCalls).toEqual([]);
    expect(steps[0]?.finishReason).toBe("stop");
    expect(await withoutTools.text).toContain("You wrote: “What time is it?”");
  });

  it("does not call a tool that is not offered, or when tool choice is none", async () => {
    const { current_time } = tools();
    const onlyClock = await generateText({
      model: offline(),
      messages: ask("Open https://example.com please"),
      tools: { current_time },
    });
    const none = await generateText({
      model: offline(),
      messages: ask("What time is it?"),
      tools: tools(),
      toolChoice: "none",
    });
    expect(onlyClock.toolCalls).toEqual([]);
    expect(none.toolCalls).toEqual([]);
    expect(none.text).toContain("You wrote:");
  });

  it("does not call the tool again once its result is in the prompt", async () => {
    const clock = currentTime("Europe/Lisbon", now);
    const messages: ModelMessage[] = [
      { role: "user", content: "What's the time in Lisbon?" },
      {
        role: "assistant",
        content: [
          {
            type: "tool-call",
            toolCallId: "call-1",
            toolName: "current_time",
            input: { timeZone: "Europe/Lisbon" },
          },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call-1",
            toolName: "current_time",
            output: { type: "json", value: clock },
          },
        ],
      },
    ];
    const result = streamText({
      model: offline(),
      messages,
      tools: tools(),
      stopWhen: isStepCount(5),
    });
    const steps = await result.steps;

    expect(steps).toHaveLength(1);
    expect(steps[0]?.toolCalls).toEqual([]);
    expect(await result.text).toContain(clock.formatted);
    expect(await result.text).toContain("Europe/Lisbon");
  });

  it("calls the tool again for a new question after an answered one", async () => {
    const messages: ModelMessage[] = [
      { role: "user", content: "What time is it?" },
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "call-1", toolName: "current_time", input: {} }],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call-1",
            toolName: "current_time",
            output: { type: "json", value: currentTime("UTC", now) },
          },
        ],
      },
      { role: "assistant", content: "It is 12:30 PM UTC." },
      { role: "user", content: "And what time is it now?" },
    ];
    const { toolCalls } = await generateText({ model: offline(), messages, tools: tools() });
    expect(toolCalls).toEqual([expect.objectContaining({ toolName: "current_time" })]);
  });

  it("asks recall for what the user asks to recall, then quotes the message it found", async () => {
    const queries: string[] = [];
    const recallTools = builtinTools({
      recall: {
        search: async (query) => {
          queries.push(query);
          return {
            covered: "1-40",
            matches: [
              {
                message: 3,
                role: "user",
                excerpt: "…the deploy key is dk-7f3a9c2e41d8b05;\nrunbook next…",
              },
            ],
          };
        },
        read: async () => ({ covered: "1-40" }),
      },
    });
    for (const question of ["Recall: the deploy key", "What did I say about the deploy key?"]) {
      const result = await generateText({
        model: offline(),
        messages: ask(question),
        tools: recallTools,
        stopWhen: isStepCount(5),
      });
      expect(result.steps[0]?.toolCalls).toEqual([
        expect.objectContaining({ toolName: "recall", input: { query: "the deploy key" } }),
      ]);
      expect(result.text).toContain("From message 3 (user):");
      expect(result.text).toContain("> …the deploy key is dk-7f3a9c2e41d8b05; runbook next…");
    }
    expect(queries).toEqual(["the deploy key", "the deploy key"]);
  });

  it("passes on recall's note when nothing condensed holds the query", async () => {
    const result = await generateText({
      model: offline(),
      messages: ask("recall Frankfurt"),
      tools: builtinTools({
        recall: {
          search: async () => ({
            covered: null,
            matches: [],
            note: "Nothing in this chat is condensed yet.",
          }),
          read: async () => ({ covered: null }),
        },
      }),
      stopWhen: isStepCount(5),
    });
    expect(result.text).toContain("Nothing in this chat is condensed yet.");
  });
});
