import { generateText, type LanguageModel } from "ai";
import { parseModelId } from "@/lib/ai/model-id";
import type { SummarizerModel } from "@/lib/compaction/ports";
import { defaultEstimator } from "@/lib/context/tokens";
import type { Db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { log } from "@/lib/log";
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
      // A server may report 0 while it sent reasoning: the larger of its count and Fold's.
      const reasoningTokens = Math.max(
        result.usage.outputTokenDetails?.reasoningTokens ?? 0,
        result.reasoningText ? defaultEstimator.countText(result.reasoningText) : 0,
      );
      return { text: result.text, finishReason: result.finishReason, reasoningTokens };
    },
  };
}

/** Configured summarizers already reported as unavailable (once each per process). */
const reportedUnavailable = new Set<string>();

/**
 * COMPACTION_SUMMARIZER_MODELS in order, else the chat's own model; unknown ids are skipped.
 * When none of the configured ones is available (a provider with no key), the chat's own model
 * summarizes: without any, every fold would be the fallback digest.
 */
export async function summarizerModels(
  chatModelId: string,
  resolveModel: (modelId: string) => LanguageModel,
  db: Db,
): Promise<SummarizerModel[]> {
  const configured = env().compaction.summarizerModels;
  const available = async (ids: readonly string[]) => {
    const models: SummarizerModel[] = [];
    for (const id of ids) {
      const parsed = parseModelId(id);
      if (!parsed) continue;
      try {
        const model = resolveModel(id);
        const window = await resolveContextWindow(parsed.provider, parsed.model, db);
        models.push(summarizerModel({ id, model, contextWindow: window.contextWindow }));
      } catch (error) {
        // A configured summarizer that is not available is skipped; the cascade goes on.
        if (configured.includes(id) && !reportedUnavailable.has(id)) {
          reportedUnavailable.add(id);
          log.warn({ err: error, modelId: id }, "COMPACTION_SUMMARIZER_MODELS: model unavailable");
        }
      }
    }
    return models;
  };
  const models = configured.length > 0 ? await available(configured) : [];
  return models.length > 0 ? models : available([chatModelId]);
}
