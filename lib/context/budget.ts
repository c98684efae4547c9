/** DESIGN §7: how a window is divided, and where compaction triggers and aims. */

/** Output reserve when the model's output limit is unknown: a long answer, not a quarter of a huge window. */
const DEFAULT_OUTPUT_RESERVE_TOKENS = 4096;
const DEFAULT_OUTPUT_RESERVE_SHARE = 0.25;
/** No reserve may take more than half the window, or nothing is left for the conversation. */
const MAX_RESERVE_SHARE = 0.5;
/** Summaries beyond this stop being summaries; the keep window carries the detail. */
const SUMMARY_MAX_TOKENS = 4000;
/** A tool result below this is never worth a placeholder, however small the window. */
const BULKY_MIN_TOKENS = 256;

export type BudgetRatios = {
  triggerRatio: number;
  targetRatio: number;
  reserveRatio: number;
  keepRecentRatio: number;
  summaryRatio: number;
  bulkyRatio: number;
};

export type Budget = {
  contextWindow: number;
  outputReserve: number;
  safetyReserve: number;
  inputBudget: number;
  trigger: number;
  target: number;
  keepRecent: number;
  summaryBudget: number;
  bulkyToolTokens: number;
};

/** DESIGN §7's defaults; `lib/env.ts` falls back to these and repairs bad combinations with `clampRatios`. */
export const DEFAULT_BUDGET_RATIOS: BudgetRatios = {
  triggerRatio: 0.8,
  targetRatio: 0.5,
  reserveRatio: 0.05,
  keepRecentRatio: 0.25,
  summaryRatio: 0.15,
  bulkyRatio: 0.05,
};

/**
 * Repairs ratios that cannot work together: the target must sit below the
 * trigger (the gap is the hysteresis that stops compaction re-firing), and the
 * safety reserve must leave room. Bad combinations fall back to the defaults.
 */
export function clampRatios<T extends BudgetRatios>(ratios: T, warn: (message: string) => void): T {
  let { triggerRatio, targetRatio, reserveRatio } = ratios;
  if (targetRatio >= triggerRatio) {
    warn(
      `compaction target ${targetRatio} is not below trigger ${triggerRatio}; using ${DEFAULT_BUDGET_RATIOS.targetRatio} and ${DEFAULT_BUDGET_RATIOS.triggerRatio}`,
    );
    targetRatio = DEFAULT_BUDGET_RATIOS.targetRatio;
    triggerRatio = DEFAULT_BUDGET_RATIOS.triggerRatio;
  }
  if (reserveRatio > MAX_RESERVE_SHARE) {
    warn(`compaction reserve ${reserveRatio} is above ${MAX_RESERVE_SHARE}; capping`);
    reserveRatio = MAX_RESERVE_SHARE;
  }
  return { ...ratios, triggerRatio, targetRatio, reserveRatio };
}

/**
 * The one Budget for a window. `ratios` arrive already repaired by `clampRatios`
 * (lib/env.ts does it once at start, and says so), so nothing here is silent.
 */
export function computeBudget(
  window: { contextWindow: number; maxOutputTokens: number | null },
  r: BudgetRatios,
): Budget {
  const W = window.contextWindow;
  const outputReserve = outputReserveOf(window);
  // Both reserves together never take more than half the window: the safety margin gives way first.
  const safetyReserve = Math.floor(
    Math.min(r.reserveRatio * W, MAX_RESERVE_SHARE * W - outputReserve),
  );
  const inputBudget = W - outputReserve - safetyReserve;
  return {
    contextWindow: W,
    outputReserve,
    safetyReserve,
    inputBudget,
    trigger: Math.floor(r.triggerRatio * inputBudget),
    target: Math.floor(r.targetRatio * inputBudget),
    keepRecent: Math.floor(r.keepRecentRatio * inputBudget),
    summaryBudget: Math.floor(Math.min(r.summaryRatio * inputBudget, SUMMARY_MAX_TOKENS)),
    bulkyToolTokens: Math.floor(Math.max(BULKY_MIN_TOKENS, r.bulkyRatio * inputBudget)),
  };
}

type WindowShape = { contextWindow: number; maxOutputTokens: number | null };

/** What a window keeps free for the reply: the output limit, or a long answer, never over half. */
export function outputReserveOf(window: WindowShape): number {
  const W = window.contextWindow;
  return Math.floor(
    Math.min(
      window.maxOutputTokens ??
        Math.min(DEFAULT_OUTPUT_RESERVE_TOKENS, DEFAULT_OUTPUT_RESERVE_SHARE * W),
      MAX_RESERVE_SHARE * W,
    ),
  );
}

/**
 * The least a window must hold besides the reply's reserve: Fold's instructions and tools
 * (a few hundred tokens) and a short exchange. Below it every message would be "too long".
 */
export const MIN_CONVERSATION_TOKENS = 1024;

/** Why a window cannot hold a conversation (for an admin's override), or null when it can. */
export function windowTooSmall(window: WindowShape): string | null {
  const reserve = outputReserveOf(window);
  const room = window.contextWindow - reserve;
  if (room >= MIN_CONVERSATION_TOKENS) return null;
  const count = (n: number) => n.toLocaleString("en-US");
  return `is too small: after keeping ${count(reserve)} tokens free for the reply, ${count(room)} are left for the conversation, and a chat needs at least ${count(MIN_CONVERSATION_TOKENS)} (a window of ${count(minimumWindow(window.maxOutputTokens))} or more)`;
}

/** The smallest window that passes `windowTooSmall` for this output limit. */
export function minimumWindow(maxOutputTokens: number | null): number {
  let W = MIN_CONVERSATION_TOKENS;
  while (W - outputReserveOf({ contextWindow: W, maxOutputTokens }) < MIN_CONVERSATION_TOKENS) {
    W += 1;
  }
  return W;
}
