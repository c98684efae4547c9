import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import type { UIMessageChunk } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { expect, it } from "vitest";
import { chatRequestFrame } from "@/lib/ai/request-frame";
import type { ModelBudget } from "@/lib/chat/budget";
import { computeBudget } from "@/lib/context/budget";
import { classRatios } from "@/lib/context/calibration";
import { env } from "@/lib/env";
import { answer } from "@/lib/turn/answer";
import { noObservations, type TurnObservations } from "@/lib/turn/observe";

const usage = {
  inputTokens: { total: 40, noCache: 40, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 3, text: 3, reasoning: 0 },
};

/** A model that answers "All done." at once. */
const finishedModel = () =>
  new MockLanguageModelV4({
    doStream: async () => ({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          for (const part of [
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "All done." },
            { type: "text-end", id: "t" },
            { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
          ] as LanguageModelV4StreamPart[])
            controller.enqueue(part);
          controller.close();
        },
      }),
    }),
  });

/**
 * A turn's answer whose Stop lands the moment the model's stream has finished: as the turn
 * notes the finish, before the answer has written its finish chunk.
 */
async function answerStoppedAsItFinishes() {
  const stop = new AbortController();
  const observed: TurnObservations = noObservations();
  let finished = false;
  Object.defineProperty(observed, "finished", {
    get: () => finished,
    set: (value: boolean) => {
      finished = value;
      if (value) stop.abort();
    },
  });
  const budget: ModelBudget = {
    modelId: "fake:small",
    window: { contextWindow: 8_192, maxOutputTokens: null, source: "default" },
    budget: computeBudget({ contextWindow: 8_192, maxOutputTokens: null }, env().compaction),
    ratio: 1,
    classRatios: classRatios(null),
    calibrationSamples: 0,
  };
  const chunks: UIMessageChunk[] = [];
  await answer(
    {
      chatId: "chat-1",
      model: finishedModel(),
      budget,
      frame: await chatRequestFrame(new Date()),
      compaction: {
        view: [{ id: "u1", role: "user", parts: [{ type: "text", text: "Are you done?" }] }],
        viewVersion: 0,
        projectedTokens: null,
        trace: null,
        fits: true,
        capTokens: null,
        trigger: budget.budget.trigger,
      },
      observed,
      startedAt: Date.now(),
      now: Date.now,
      onRecovery: async () => undefined,
      stopSignal: stop.signal,
    },
    (chunk) => chunks.push(chunk),
  );
  return { chunks, observed, stopped: stop.signal.aborted };
}

it("a Stop landing once the model has finished cuts nothing: the reply ends with its finish and stats", async () => {
  const { chunks, observed, stopped } = await answerStoppedAsItFinishes();
  expect(stopped).toBe(true);
  const finish = chunks.find((c) => c.type === "finish");
  expect(finish).toBeDefined();
  // The finished reply's own metadata (its stats), not a stopped one.
  expect(JSON.stringify(finish)).toContain('"stats"');
  expect(JSON.stringify(finish)).not.toContain('"stopped":true');
  expect(observed.stopped).toBeFalsy();
  expect(chunks.filter((c) => c.type === "text-delta").map((c) => c.delta)).toEqual(["All done."]);
});
