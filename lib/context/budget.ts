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

/** The target's share of the trigger by default (0.5 of 0.8): kept when one of them moves alone. */
const TARGET_OF_TRIGGER = DEFAULT_BUDGET_RATIOS.targetRatio / DEFAULT_BUDGET_RATIOS.triggerRatio;
/** The highest trigger a ratio may have (COMPACTION_TRIGGER_RATIO's own limit). */
const MAX_TRIGGER_RATIO = 0.99;
/** The least gap between trigger and target a default moved along leaves: a fold's hysteresis. */
const MIN_TRIGGER_GAP = 0.04;
/** The most of the target the summary may take: the rest is the recent messages kept verbatim. */
const MAX_SUMMARY_SHARE_OF_TARGET = 0.5;
const round3 = (value: number) => Math.round(value * 1000) / 1000;

/**
 * Repairs ratios that cannot work together: the target must sit below the trigger (the gap
 * is the hysteresis that stops compaction re-firing), the summary must leave room under the
 * target, and the safety reserve must leave room. One of trigger and target set alone, past
 * the other's default, moves that default along (compacting earlier asks for a lower target,
 * not for the defaults); both set and crossed fall back to the defaults.
 */
export function clampRatios<T extends BudgetRatios>(
  ratios: T,
  warn: (message: string) => void,
  set: { trigger: boolean; target: boolean } = { trigger: true, target: true },
): T {
  let { triggerRatio, targetRatio, reserveRatio } = ratios;
  // One set alone so near the other's default that a fold would leave almost no room before
  // the next (a trigger of 0.52 beside the target's 0.5) moves that default as well.
  const tooNear = set.trigger !== set.target && targetRatio > triggerRatio - MIN_TRIGGER_GAP;
  if (targetRatio >= triggerRatio || tooNear) {
    if (set.trigger && !set.target) {
      targetRatio = round3(triggerRatio * TARGET_OF_TRIGGER);
      warn(
        `COMPACTION_TARGET_RATIO (unset, ${ratios.targetRatio}) is not below COMPACTION_TRIGGER_RATIO ${triggerRatio}; using ${targetRatio}`,
      );
    } else if (set.target && !set.trigger) {
      triggerRatio = round3(
        Math.min(
          MAX_TRIGGER_RATIO,
          Math.max(targetRatio + MIN_TRIGGER_GAP, targetRatio / TARGET_OF_TRIGGER),
        ),
      );
      warn(
        `COMPACTION_TRIGGER_RATIO (unset, ${ratios.triggerRatio}) is not above COMPACTION_TARGET_RATIO ${targetRatio}; using ${triggerRatio}`,
      );
    } else {
      warn(
        `compaction target ${targetRatio} is not below trigger ${triggerRatio} (COMPACTION_TARGET_RATIO, COMPACTION_TRIGGER_RATIO); using ${DEFAULT_BUDGET_RATIOS.targetRatio} and ${DEFAULT_BUDGET_RATIOS.triggerRatio}`,
      );
      targetRatio = DEFAULT_BUDGET_RATIOS.targetRatio;
      triggerRatio = DEFAULT_BUDGET_RATIOS.triggerRatio;
    }
  }
  // The summary is part of what a fold lands on: one that may fill the target leaves no room
  // for the recent messages kept verbatim, and the next turn crosses the trigger again.
  let { summaryRatio } = ratios;
  const summaryCap = Math.floor(targetRatio * MAX_SUMMARY_SHARE_OF_TARGET * 1000) / 1000;
  if (summaryRatio > summaryCap) {
    warn(
      `COMPACTION_SUMMARY_RATIO ${summaryRatio} would take more than half of the compaction target ${targetRatio}, leaving little or no room for recent messages; using ${summaryCap}`,
    );
    summaryRatio = summaryCap;
  }
  if (reserveRatio > MAX_RESERVE_SHARE) {
    warn(`compaction reserve ${reserveRatio} is above ${MAX_RESERVE_SHARE}; capping`);
    reserveRatio = MAX_RESERVE_SHARE;
  }
  return { ...ratios, triggerRatio, targetRatio, reserveRatio, summaryRatio };
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
