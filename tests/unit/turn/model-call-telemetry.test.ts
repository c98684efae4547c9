import { tracingChannel } from "node:diagnostics_channel";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import type { ModelBudget } from "@/lib/chat/budget";
import { computeBudget, DEFAULT_BUDGET_RATIOS } from "@/lib/context/budget";
import { COLD_CLASS_RATIOS } from "@/lib/context/calibration";
import { streamModelCall } from "@/lib/turn/model-call";

/**
 * The AI SDK publishes each model call on its `ai:telemetry` tracing channel, building and
 * redacting a copy of the event first. A turn does that only when AI_TELEMETRY asks for it.
 */

const channel = tracingChannel("ai:telemetry");
const seen: unknown[] = [];
const ignore = () => undefined;
const listener = {
  start: (message: object) => {
    seen.push(message);
  },
  end: ignore,
  asyncStart: ignore,
  asyncEnd: ignore,
  error: ignore,
};

const budget: ModelBudget = {
  modelId: "fake:model",
  window: { contextWindow: 32_000, maxOutputTokens: null, source: "default" },
  budget: computeBudget({ contextWindow: 32_000, maxOutputTokens: null }, DEFAULT_BUDGET_RATIOS),
  ratio: 1,
  classRatios: { ...COLD_CLASS_RATIOS },
  calibrationSamples: 0,
};

function answerOnce() {
  const chunks: LanguageModelV4StreamPart[] = [
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "hi" },
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
  return new MockLanguageModelV4({ doStream: { stream: simulateReadableStream({ chunks }) } });
}

async function turn(telemetry?: boolean) {
  const result = streamModelCall({
    model: answerOnce(),
    budget,
    instructions: "Be brief.",
    tools: {},
    overheadTokens: 10,
    toolOverheadTokens: 0,
    messages: [{ role: "user", content: "hello" }],
    maxSteps: 1,
    proactive: true,
    keepRecentToolResults: 3,
    telemetry,
  });
  expect(await result.text).toBe("hi");
}

describe("a turn's model call and the AI SDK's telemetry", () => {
  afterEach(() => {
    channel.unsubscribe(listener);
    seen.length = 0;
  });

  it("publishes nothing on the ai:telemetry channel by default, even with a subscriber", async () => {
    channel.subscribe(listener);
    await turn();
    expect(seen).toEqual([]);
  });

  it("publishes the call when telemetry is asked for", async () => {
    channel.subscribe(listener);
    await turn(true);
    expect(seen.length).toBeGreaterThan(0);
  });
});
