import type { TextStreamPart, ToolSet } from "ai";
import { describe, expect, it } from "vitest";
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

describe("how long a reply's model wrote", () => {
  it("counts each step from its first token to its end, not the tool run or the wait for the next step", async () => {
    const track = await observe([
      [0, { type: "start-step" }],
      [100, { type: "text-delta", id: "t", text: "Let me check." }],
      [150, { type: "tool-call", toolCallId: "c1", toolName: "fetch_url", input: {} }],
      [200, { type: "finish-step", usage, finishReason: "tool-calls" }],
      // The tool runs a second, then the model takes 300 ms to start the next step.
      [1_200, { type: "tool-result", toolCallId: "c1", toolName: "fetch_url", output: "ok" }],
      [1_200, { type: "start-step" }],
      [1_500, { type: "text-delta", id: "t2", text: "Done." }],
      [1_700, { type: "finish-step", usage, finishReason: "stop" }],
    ]);
    expect(track.firstTokenAt).toBe(100);
    expect(track.toolDurationsMs.c1).toBe(1_050);
    expect(track.writingMs).toBe(300);
  });

  it("counts a step stopped mid-way until the stop", async () => {
    const track = await observe([
      [0, { type: "start-step" }],
      [40, { type: "text-delta", id: "t", text: "Once upon" }],
    ]);
    expect(writingMsAt(track, 240)).toBe(200);
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
