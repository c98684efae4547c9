import type { LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { builtinTools, type RecallPort } from "@/lib/ai/tools";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

const toolCallTurn: LanguageModelV4GenerateResult = {
  content: [
    {
      type: "tool-call",
      toolCallId: "call-1",
      toolName: "current_time",
      input: JSON.stringify({ timeZone: "Asia/Tokyo" }),
    },
  ],
  finishReason: { unified: "tool-calls", raw: "tool_calls" },
  usage,
  warnings: [],
};

const answerTurn: LanguageModelV4GenerateResult = {
  content: [{ type: "text", text: "It is 9:30 PM in Tokyo." }],
  finishReason: { unified: "stop", raw: "stop" },
  usage,
  warnings: [],
};

describe("builtinTools", () => {
  it("offers fetch_url, current_time and recall to the model", () => {
    const tools = builtinTools();
    expect(Object.keys(tools).sort()).toEqual(["current_time", "fetch_url", "recall"]);
    expect(tools.fetch_url.description).toMatch(/public internet/);
  });

  it("runs current_time in a generateText tool loop and feeds its result to the next call", async () => {
    const model = new MockLanguageModelV4({ doGenerate: [toolCallTurn, answerTurn] });
    const result = await generateText({
      model,
      messages: [{ role: "user", content: "What time is it in Tokyo?" }],
      tools: builtinTools({ currentTime: { now: () => new Date("2024-03-15T12:30:45.678Z") } }),
      stopWhen: isStepCount(3),
    });

    expect(result.text).toBe("It is 9:30 PM in Tokyo.");
    expect(result.steps).toHaveLength(2);
    expect(model.doGenerateCalls).toHaveLength(2);

    const toolMessage = model.doGenerateCalls[1]?.prompt.find((message) => message.role === "tool");
    expect(toolMessage?.content).toEqual([
      expect.objectContaining({
        type: "tool-result",
        toolCallId: "call-1",
        toolName: "current_time",
        output: {
          type: "json",
          value: expect.objectContaining({
            iso: "2024-03-15T21:30:45.678+09:00",
            timeZone: "Asia/Tokyo",
            unixMs: Date.parse("2024-03-15T12:30:45.678Z"),
          }),
        },
      }),
    ]);
  });

  it("turns a refused fetch into a tool error the model sees, not a crash", async () => {
    const model = new MockLanguageModelV4({
      doGenerate: [
        {
          ...toolCallTurn,
          content: [
            {
              type: "tool-call",
              toolCallId: "call-2",
              toolName: "fetch_url",
              input: JSON.stringify({ url: "http://169.254.169.254/latest/meta-data/" }),
            },
          ],
        },
        answerTurn,
      ],
    });
    await generateText({
      model,
      messages: [{ role: "user", content: "Read the metadata endpoint" }],
      tools: builtinTools({ fetchUrl: { allowPrivate: false } }),
      stopWhen: isStepCount(3),
    });

    const toolMessage = model.doGenerateCalls[1]?.prompt.find((message) => message.role === "tool");
    expect(toolMessage?.content).toEqual([
      expect.objectContaining({
        type: "tool-result",
        toolName: "fetch_url",
        output: {
          type: "error-text",
          value: expect.stringMatching(/169\.254\.169\.254 is a link-local address/),
        },
      }),
    ]);
  });

  /** The tool message the model's second call carried after it called recall with `input`. */
  async function recallAnswer(input: unknown, port?: RecallPort) {
    const model = new MockLanguageModelV4({
      doGenerate: [
        {
          ...toolCallTurn,
          content: [
            {
              type: "tool-call",
              toolCallId: "call-3",
              toolName: "recall",
              input: JSON.stringify(input),
            },
          ],
        },
        answerTurn,
      ],
    });
    await generateText({
      model,
      messages: [{ role: "user", content: "What was the key?" }],
      tools: builtinTools(port ? { recall: port } : {}),
      stopWhen: isStepCount(3),
    });
    const toolMessage = model.doGenerateCalls[1]?.prompt.find((message) => message.role === "tool");
    return toolMessage?.content[0];
  }

  it("runs recall against the port it is bound to: a search, or a read from an offset", async () => {
    const calls: unknown[] = [];
    const port: RecallPort = {
      search: async (query) => {
        calls.push(["search", query]);
        return { covered: "1-9", matches: [{ message: 3, role: "user", excerpt: "key k-1" }] };
      },
      read: async (message, offset) => {
        calls.push(["read", message, offset]);
        return { covered: "1-9", message, role: "user", text: "key k-1" };
      },
    };
    expect(await recallAnswer({ query: "  the key " }, port)).toMatchObject({
      output: { type: "json", value: { matches: [{ message: 3 }] } },
    });
    await recallAnswer({ message: 3 }, port);
    await recallAnswer({ message: 3, offset: 8000 }, port);
    expect(calls).toEqual([
      ["search", "the key"],
      ["read", 3, 0],
      ["read", 3, 8000],
    ]);
  });

  it("refuses recall input that names neither or both of a query and a message, before the port", async () => {
    let reached = false;
    const port: RecallPort = {
      search: async () => {
        reached = true;
        return { covered: null, matches: [] };
      },
      read: async () => {
        reached = true;
        return { covered: null };
      },
    };
    for (const input of [{}, { query: "key", message: 2 }, { message: 0 }, { query: "" }]) {
      expect(await recallAnswer(input, port)).toMatchObject({ output: { type: "error-text" } });
    }
    expect(reached).toBe(false);
  });

  it("answers recall with a tool error where no chat is bound (a request outside a turn)", async () => {
    expect(await recallAnswer({ query: "key" })).toMatchObject({
      output: { type: "error-text", value: expect.stringMatching(/not available/) },
    });
  });
});
