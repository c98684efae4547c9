import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import type { UIMessageChunk } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { chatRequestFrame } from "@/lib/ai/request-frame";
import type { ModelBudget } from "@/lib/chat/budget";
import { computeBudget } from "@/lib/context/budget";
import { classRatios } from "@/lib/context/calibration";
import { env } from "@/lib/env";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { answer } from "@/lib/turn/answer";
import { noObservations, type TurnObservations } from "@/lib/turn/observe";

/**
 * The turn's `answer` (lib/turn/answer.ts) on its own: a model, a view, an 8k budget, no
 * compaction. Import only after setting process.env (it reads the environment).
 */

/** A provider's usage of a short reply. */
export const usage = {
  inputTokens: { total: 40, noCache: 40, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 3, text: 3, reasoning: 0 },
};

/**
 * A model whose every stream is what `send` writes to it; with `parts`, those parts at once and
 * closed. `send` gets the call (its prompt, its abort signal).
 */
export function streamingModel(
  send:
    | readonly LanguageModelV4StreamPart[]
    | ((
        controller: ReadableStreamDefaultController<LanguageModelV4StreamPart>,
        call: LanguageModelV4CallOptions,
      ) => void | Promise<void>),
): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: async (call) => ({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        async start(controller) {
          if (typeof send === "function") return send(controller, call);
          for (const part of send) controller.enqueue(part);
          controller.close();
        },
      }),
    }),
  });
}

/** A reply of `text` at once, finished. */
export const answeringModel = (text: string) =>
  streamingModel([
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: text },
    { type: "text-end", id: "t" },
    { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
  ]);

const budget: ModelBudget = {
  modelId: "fake:small",
  window: { contextWindow: 8_192, maxOutputTokens: null, source: "default" },
  budget: computeBudget({ contextWindow: 8_192, maxOutputTokens: null }, env().compaction),
  ratio: 1,
  classRatios: classRatios(null),
  calibrationSamples: 0,
};

/** `answer` with `model` on `view` (one user message by default); the chunks it wrote. */
export async function answerWith(
  model: MockLanguageModelV4,
  options: {
    view?: FoldUIMessage[];
    observed?: TurnObservations;
    stopSignal?: AbortSignal;
    chunks?: UIMessageChunk[];
  } = {},
): Promise<UIMessageChunk[]> {
  const chunks = options.chunks ?? [];
  await answer(
    {
      chatId: "chat-1",
      model,
      budget,
      frame: await chatRequestFrame(new Date()),
      compaction: {
        view: options.view ?? [
          { id: "u1", role: "user", parts: [{ type: "text", text: "Are you done?" }] },
        ],
        viewVersion: 0,
        projectedTokens: null,
        trace: null,
        fits: true,
        capTokens: null,
        trigger: budget.budget.trigger,
      },
      observed: options.observed ?? noObservations(),
      startedAt: Date.now(),
      now: Date.now,
      onRecovery: async () => undefined,
      stopSignal: options.stopSignal,
    },
    (chunk) => chunks.push(chunk),
  );
  return chunks;
}
