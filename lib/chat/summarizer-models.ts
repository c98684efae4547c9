import { generateText, type LanguageModel } from "ai";
import { parseModelId } from "@/lib/ai/model-id";
import type { SummarizerModel } from "@/lib/compaction/ports";
import { defaultEstimator } from "@/lib/context/tokens";
import type { Db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { resolveContextWindow } from "@/lib/model-window/window";

/** The summarizer port backed by an AI SDK model: one `generateText` call, no SDK retries. */
export function summarizerModel(entry: {
  id: string;
  model: LanguageModel;
  contextWindow: number;
}): SummarizerModel {
  return {
    id: entry.id,
    contextWindow: entry.contextWindow,
    generate: async ({ instructions, prompt, maxOutputTokens, abortSignal }) => {
      const result = await generateText({
        model: entry.model,
        instructions,
        prompt,
        maxOutputTokens,
        maxRetries: 0,
        abortSignal,
        telemetry: { isEnabled: env().aiTelemetry },
      });
      const reasoningTokens =
        result.usage.outputTokenDetails?.reasoningTokens ??
        (result.reasoningText ? defaultEstimator.countText(result.reasoningText) : 0);
      return { text: result.text, finishReason: result.finishReason, reasoningTokens };
    },
  };
}

/** COMPACTION_SUMMARIZER_MODELS in order, else the chat's own model; unknown ids are skipped. */
export async function summarizerModels(
  chatModelId: string,
  resolveModel: (modelId: string) => LanguageModel,
  db: Db,
): Promise<SummarizerModel[]> {
  const configured = env().compaction.summarizerModels;
  const ids = configured.length > 0 ? configured : [chatModelId];
  const models: SummarizerModel[] = [];
  for (const id of ids) {
    const parsed = parseModelId(id);
    if (!parsed) continue;
    try {
      const model = resolveModel(id);
      const window = await resolveContextWindow(parsed.provider, parsed.model, db);
      models.push(summarizerModel({ id, model, contextWindow: window.contextWindow }));
    } catch {
      // A configured summarizer that is not available is skipped; the cascade goes on.
    }
  }
  return models;
}
