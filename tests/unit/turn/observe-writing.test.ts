import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { stepCountIs, streamText, type TextStreamPart, type ToolSet, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { deriveTimings, type MessageStats } from "@/lib/message/stats";
import { observeTurn, writingMsAt } from "@/lib/turn/observe";

type Part = TextStreamPart<ToolSet>;

/** Parts at the clock times given, through observeTurn; what it noted. */
async function observe(timed: ReadonlyArray<[number, Record<string, unknown>]>) {
  let clock = 0;
  const source = new ReadableStream<Part>({
    start(controller) {
      for (const [, part] of timed) controller.enqueue(part as unknown as Part);
      controller.close();
    },
  });
  let index = 0;
  const { stream, track } = observeTurn(source, () => clock);
  const reader = stream.getReader();
  // Each part is read at its own time: the clock moves before the observer sees it.
  for (;;) {
    clock = timed[index]?.[0] ?? clock;
    const { done } = await reader.read();
    if (done) break;
    index += 1;
  }
  return track;
}

const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };
const mockUsage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
/** Long beside a mock model's writing, short for a test. */
const TOOL_RUN_MS = 300;

describe("how long a reply's model wrote", () => {
  it("counts each step from its first token to its last output, not the tool run or the wait for the next step", async () => {
    // The AI SDK's order: a step's tool runs, and its result comes, before the step ends.
    const track = await observe([
      [0, { type: "start-step" }],
      [100, { type: "text-delta", id: "t", text: "Let me check." }],
      [150, { type: "tool-call", toolCallId: "c1", toolName: "fetch_url", input: {} }],
      [1_150, { type: "tool-result", toolCallId: "c1", toolName: "fetch_url", output: "ok" }],
      [1_150, { type: "finish-step", usage, finishReason: "tool-calls" }],
      // The model takes 350 ms to start the next step.
      [1_150, { type: "start-step" }],
      [1_500, { type: "text-delta", id: "t2", text: "Done." }],
      [1_700, { type: "text-end", id: "t2" }],
      [1_700, { type: "finish-step", usage, finishReason: "stop" }],
    ]);
    expect(track.firstTokenAt).toBe(100);
    expect(track.toolDurationsMs.c1).toBe(1_000);
    expect(track.writingMs).toBe(250);
  });

  it("counts a step stopped mid-way until its last output", async () => {
    const track = await observe([
      [0, { type: "start-step" }],
      [40, { type: "text-delta", id: "t", text: "Once upon" }],
      [240, { type: "text-delta", id: "t", text: " a time" }],
    ]);
    expect(writingMsAt(track)).toBe(200);
  });

  it("leaves out a tool's run as the AI SDK streams a real tool step", async () => {
    let call = 0;
    const model = new MockLanguageModelV4({
      doStream: async () => {
        call += 1;
        const parts: LanguageModelV4StreamPart[] =
          call === 1
            ? [
                { type: "tool-call", toolCallId: "c1", toolName: "slow", input: "{}" },
                {
                  type: "finish",
                  finishReason: { unified: "tool-calls", raw: "tool_calls" },
                  usage: mockUsage,
                },
              ]
            : [
                { type: "text-start", id: "t" },
                { type: "text-delta", id: "t", delta: "Done." },
                { type: "text-end", id: "t" },
                {
                  type: "finish",
                  finishReason: { unified: "stop", raw: "stop" },
                  usage: mockUsage,
                },
              ];
        return {
          stream: new ReadableStream({
            start(controller) {
              for (const part of parts) controller.enqueue(part);
              controller.close();
            },
          }),
        };
      },
    });
    const result = streamText({
      model,
      prompt: "hi",
      stopWhen: stepCountIs(3),
      tools: {
        slow: tool({
          inputSchema: z.object({}),
          execute: async () => {
            await new Promise((resolve) => setTimeout(resolve, TOOL_RUN_MS));
            return "ok";
          },
        }),
      },
    });
    const { stream, track } = observeTurn(result.stream);
    for await (const _ of stream) {
      // read to the end
    }
    expect(track.toolDurationsMs.c1).toBeGreaterThanOrEqual(TOOL_RUN_MS - 5);
    expect(track.writingMs).toBeLessThan(TOOL_RUN_MS / 2);
  });
});

describe("a reply's speed", () => {
  const stats = (writingMs?: number): MessageStats => ({
    model: "m",
    inputTokens: 100,
    outputTokens: 600,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    contextTokens: 100,
    steps: 2,
    startedAt: 0,
    firstTokenAt: 100,
    finishedAt: 20_100,
    ...(writingMs === undefined ? {} : { writingMs }),
    finishReason: "stop",
  });

  it("is over the time the model wrote: a 19-second tool run does not make it slow", () => {
    expect(deriveTimings(stats(1_000)).tokensPerSecond).toBe(600);
  });

  it("of a reply stored before the writing time was kept is over the time after its first token", () => {
    expect(deriveTimings(stats()).tokensPerSecond).toBe(30);
  });
});
