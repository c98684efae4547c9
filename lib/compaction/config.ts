import type { LanguageModel } from "ai";
import { parseModelId } from "@/lib/ai/model-id";
import { type Budget, computeBudget, ratiosFromEnv } from "@/lib/context/budget";
import { resolveContextWindow } from "@/lib/context/window";
import { env } from "@/lib/env";

/** Compaction settings for one chat model: its budget and the summarizer cascade. */

export type SummarizerChoice = { id: string; model: LanguageModel; contextWindow: number };

export async function budgetFor(
  modelId: string,
): Promise<{ budget: Budget; contextWindow: number; source: string }> {
  const parsed = parseModelId(modelId);
  const window = parsed
    ? await resolveContextWindow(parsed.provider, parsed.model)
    : { contextWindow: 8192, maxOutputTokens: null, source: "default" as const };
  return {
    budget: computeBudget(window, ratiosFromEnv(env().compaction)),
    contextWindow: window.contextWindow,
    source: window.source,
  };
}

/** COMPACTION_SUMMARIZER_MODELS in order, else the chat's own model; unknown ids are skipped. */
export async function summarizerModels(
  chatModelId: string,
  resolveModel: (modelId: string) => LanguageModel,
): Promise<SummarizerChoice[]> {
  const ids =
    env().compaction.summarizerModels.length > 0
      ? env().compaction.summarizerModels
      : [chatModelId];
  const choices: SummarizerChoice[] = [];
  for (const id of ids) {
    const parsed = parseModelId(id);
    if (!parsed) continue;
    try {
      const model = resolveModel(id);
      const window = await resolveContextWindow(parsed.provider, parsed.model);
      choices.push({ id, model, contextWindow: window.contextWindow });
    } catch {
      // A configured summarizer that is not available is skipped; the cascade goes on.
    }
  }
  return choices;
}
