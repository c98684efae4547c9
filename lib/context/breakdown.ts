import type { Budget } from "./budget";

/** The ring's breakdown bar: where the window goes. */
export type ContextBreakdown = {
  systemAndTools: number;
  summary: number;
  messages: number;
  reservedForOutput: number;
  free: number;
};

/** Calibrated token counts of the next request, as Tier 1 projects it. */
export type ProjectedRequest = {
  projectedTokens: number;
  overheadTokens: number;
  summaryTokens: number;
};

export function breakdown(projection: ProjectedRequest, budget: Budget): ContextBreakdown {
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
