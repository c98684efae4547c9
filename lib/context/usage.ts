import type { FoldUIMessage } from "@/lib/chat/ui-message";
import type { Budget } from "./budget";
import type { TokenEstimator } from "./tokens";

/**
 * How full the next request will be (DESIGN §5): the provider's own count of
 * the last turn plus an estimate of what came after it — real usage first,
 * estimates only for the new part. Costs O(messages since the last reply).
 */
export type ContextProjection = {
  projectedTokens: number;
  /** Input tokens the provider reported for the last step of the last reply, if that reply was this model's. */
  lastContextTokens: number | null;
  overheadTokens: number;
  summaryTokens: number;
  method: "real" | "estimate";
};

export function projectContext(input: {
  messages: readonly FoldUIMessage[];
  modelId: string;
  /** Raw (uncalibrated) tokens of the system prompt and tool schemas. */
  overheadTokens: number;
  /** Raw tokens of the summary message sent in place of folded history (0 without one). */
  summaryTokens?: number;
  ratio: number;
  estimator: TokenEstimator;
}): ContextProjection {
  const { messages, modelId, ratio, estimator } = input;
  const overheadTokens = Math.ceil(input.overheadTokens * ratio);
  const summaryTokens = Math.ceil((input.summaryTokens ?? 0) * ratio);

  for (let i = messages.length - 1; i >= 0; i--) {
    const stats = messages[i]?.metadata?.stats;
    if (!stats) continue;
    if (stats.model !== modelId) break;
    const since = messages.slice(i + 1);
    const projectedTokens =
      stats.contextTokens +
      (stats.lastStepOutputTokens ?? stats.outputTokens) +
      estimator.estimateUIMessages(since, { ratio });
    return {
      projectedTokens,
      lastContextTokens: stats.contextTokens,
      overheadTokens,
      summaryTokens,
      method: "real",
    };
  }
  const projectedTokens =
    overheadTokens + summaryTokens + estimator.estimateUIMessages(messages, { ratio });
  return {
    projectedTokens,
    lastContextTokens: null,
    overheadTokens,
    summaryTokens,
    method: "estimate",
  };
}

export type ContextBreakdown = {
  systemAndTools: number;
  summary: number;
  messages: number;
  reservedForOutput: number;
  free: number;
};

/** The ring's breakdown bar: where the window goes. */
export function breakdown(
  projection: Pick<ContextProjection, "projectedTokens" | "overheadTokens" | "summaryTokens">,
  budget: Budget,
): ContextBreakdown {
  const messages = Math.max(
    0,
    projection.projectedTokens - projection.overheadTokens - projection.summaryTokens,
  );
  const used = projection.overheadTokens + projection.summaryTokens + messages;
  return {
    systemAndTools: projection.overheadTokens,
    summary: projection.summaryTokens,
    messages,
    reservedForOutput: budget.outputReserve,
    free: Math.max(0, budget.contextWindow - used - budget.outputReserve),
  };
}
