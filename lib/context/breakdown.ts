import type { Budget } from "./budget";

/** The ring's breakdown bar: where the window goes. */
export type ContextBreakdown = {
  systemAndTools: number;
  summary: number;
  /** Messages the user pinned: sent verbatim whatever the summary covers. */
  pinned: number;
  messages: number;
  reservedForOutput: number;
  free: number;
};

/** Calibrated token counts of the next request, as Tier 1 projects it. */
export type ProjectedRequest = {
  projectedTokens: number;
  overheadTokens: number;
  summaryTokens: number;
  /** Pinned messages in the request (0 when none). */
  pinnedTokens?: number;
};

export function breakdown(projection: ProjectedRequest, budget: Budget): ContextBreakdown {
  const pinned = projection.pinnedTokens ?? 0;
  const messages = Math.max(
    0,
    projection.projectedTokens - projection.overheadTokens - projection.summaryTokens - pinned,
  );
  const used = projection.overheadTokens + projection.summaryTokens + pinned + messages;
  return {
    systemAndTools: projection.overheadTokens,
    summary: projection.summaryTokens,
    pinned,
    messages,
    reservedForOutput: budget.outputReserve,
    free: Math.max(0, budget.contextWindow - used - budget.outputReserve),
  };
}
