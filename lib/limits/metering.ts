/**
 * Counts the tokens of every provider call a user's request makes — each step of a tool loop,
 * each summarizer attempt, each retry — as the provider reports them, whether or not the
 * reply is stored or the browser is still there.
 */
import type { LanguageModelV4, LanguageModelV4Usage } from "@ai-sdk/provider";
import { type LanguageModel, wrapLanguageModel } from "ai";

export type TokenSink = (tokens: number) => void;

/** Input plus output tokens of one call; a count the provider left out is zero. */
export function callTokens(usage: LanguageModelV4Usage): number {
  return (usage.inputTokens.total ?? 0) + (usage.outputTokens.total ?? 0);
}

/** The same model, reporting each call's tokens to `sink` when the call finishes. */
export function meteredModel(model: LanguageModelV4, sink: TokenSink): LanguageModelV4 {
  return wrapLanguageModel({
    model,
    middleware: {
      wrapGenerate: async ({ doGenerate }) => {
        const result = await doGenerate();
        sink(callTokens(result.usage));
        return result;
      },
      wrapStream: async ({ doStream }) => {
        const result = await doStream();
        const stream = result.stream.pipeThrough(
          new TransformStream({
            transform(part, controller) {
              if (part.type === "finish") sink(callTokens(part.usage));
              controller.enqueue(part);
            },
          }),
        );
        return { ...result, stream };
      },
    },
  });
}

/** A model resolver whose models are metered. */
export function meteredResolver(
  resolve: (modelId: string) => LanguageModelV4,
  sink: TokenSink,
): (modelId: string) => LanguageModel {
  return (modelId) => meteredModel(resolve(modelId), sink);
}
