import type { TokenEstimator } from "@/lib/context/tokens";
import { foldPendingIdsOf } from "@/lib/message/pins";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { type FallbackPort, type FoldResult, foldIntoSummary, type SummarizePort } from "./fold";
import { foldTrigger, type ProjectionInput, projectNextTurn } from "./projection";
import { missedTargetNote, reachTarget } from "./target";
import { splitUserNotes, withUserNotes } from "./user-notes";
import { buildView, type ModelView, withHardWall } from "./view";

/**
 * Tier 1 (DESIGN §8), pure: given the stored history and the durable state,
 * decide the model view for this turn, and — when the projection crosses the
 * trigger, the state is dirty, or the user asked — fold everything between
 * the old watermark and the keep boundary into the summary. Writes nothing:
 * the caller commits the result through the CAS writer.
 */

export type { FallbackPort, SummarizePort };

/** The summary when only pinned messages were folded: they follow it verbatim. */
const ONLY_PINS_SUMMARY = "(The messages before this point are the pinned ones that follow.)";

export type Tier1Input = ProjectionInput & {
  /** Share of the summary budget held for the reference ledger. */
  ledgerShare: number;
  /**
   * Each message's 1-based number in the chat (`positionsOf`): a turn loads from the watermark
   * on, pinned messages ahead of it. Without it, history[0] is message 1.
   */
  positions?: ReadonlyMap<string, number>;
  /** Compact now: summarize everything but the keep window, whatever the projection says. */
  force?: boolean;
  /**
   * A background compaction is folding this chat right now: send the current view as long
   * as it fits the input budget, and leave the folding to it (its commit is CAS-checked).
   */
  deferFold?: boolean;
  /** Tokens the next request will add beyond the stored history (a compaction ahead of the turn). */
  expectedTokens?: number;
  summarize: SummarizePort;
  fallback: FallbackPort;
  signal?: AbortSignal;
  now?: () => number;
  /** Called right before the summarizer runs (the trace shows "Compacting context…"). */
  onSummarizeStart?: (info: { tokensBefore: number; messages: number }) => void;
};

export type CompactionDraft = {
  outcome: "summarized" | "fallback" | "skipped";
  tokensBefore: number;
  tokensAfter: number;
  messagesSummarized: number;
  watermarkFrom: string | null;
  watermarkTo: string | null;
  summary: string | null;
  summarizerModel: string | null;
  latencyMs: number;
  /** Why it fell back, or why it could not reach the target. */
  note: string | null;
  /** Messages unpinned before a summary told them that this fold told (their flags go). */
  foldedPendingIds: string[];
};

export type Tier1Result =
  | { kind: "noop"; view: ModelView; projectedTokens: number }
  | {
      kind: "compacted";
      view: ModelView;
      projectedTokens: number;
      next: { summary: string; watermark: string };
      draft: CompactionDraft;
    }
  | { kind: "skipped"; view: ModelView; projectedTokens: number; draft: CompactionDraft };

/**
 * The keep boundary: the earliest user-turn start whose suffix fits in
 * `keepRecent`. When the current turn alone is larger — a long tool loop
 * after one user message — its newest steps are kept and its earlier ones
 * folded, while the view keeps the user message itself verbatim (pinned, see
 * view.ts). The newest message is always kept. Message boundaries never split
 * a tool call from its result: both live in one part.
 */
export function keepBoundary(
  after: readonly FoldUIMessage[],
  keepRecentRaw: number,
  estimator: TokenEstimator,
  /** Raw tokens of a user message the view pins before `after` (already folded). */
  pinnedTokens = 0,
): number {
  const count = (message: FoldUIMessage | undefined) =>
    message ? estimator.estimateUIMessages([message]) : 0;
  const lastUser = after.findLastIndex((m) => m.role === "user");
  if (lastUser >= 0) {
    let suffix = estimator.estimateUIMessages(after.slice(lastUser));
    if (suffix <= keepRecentRaw || lastUser === after.length - 1) {
      let boundary = lastUser;
      for (let i = lastUser - 1; i >= 0; i--) {
        suffix += count(after[i]);
        if (suffix > keepRecentRaw) break;
        if (after[i]?.role === "user") boundary = i;
      }
      return boundary;
    }
  }
  if (after.length === 0) return 0;
  // Inside the current turn: the newest steps that fit beside its user message.
  const turnUserTokens = lastUser >= 0 ? count(after[lastUser]) : pinnedTokens;
  let boundary = after.length - 1;
  let suffix = turnUserTokens + count(after[boundary]);
  for (let i = boundary - 1; i > lastUser; i--) {
    suffix += count(after[i]);
    if (suffix > keepRecentRaw) break;
    boundary = i;
  }
  return boundary;
}

export async function runTier1(input: Tier1Input): Promise<Tier1Result> {
  const now = input.now ?? Date.now;
  const projected = projectNextTurn(input);
  const { rules, limitTokens, priorCapTokens } = projected;
  const tokensBefore = projected.projectedTokens;
  const dirty = input.state.dirty || projected.view.watermarkMissing;
  const expected = tokensBefore + (input.expectedTokens ?? 0);
  // The chat's own trigger costs a few estimates: only worth it once the budget's is crossed.
  const underTrigger =
    expected < input.budget.trigger ||
    expected < foldTrigger(input, projected.view, input.expectedTokens);

  // Fast path: under the trigger, nothing to repair, nobody asked.
  if (underTrigger && !dirty && !input.force && priorCapTokens === null) {
    return { kind: "noop", view: projected.view, projectedTokens: tokensBefore };
  }

  // The projection skipped the hard-wall check unless an earlier turn's cap applied it.
  const walled =
    priorCapTokens === null
      ? withHardWall(projected.view, limitTokens, input.estimator)
      : projected.view;
  if (!dirty && !input.force && underTrigger) {
    // Walled but under the trigger: keep the wall, nothing to fold.
    return { kind: "noop", view: walled, projectedTokens: tokensBefore };
  }
  if (input.deferFold && !input.force && tokensBefore <= input.budget.inputBudget) {
    return { kind: "noop", view: walled, projectedTokens: tokensBefore };
  }

  const startedAt = now();
  const span = spanToFold(input, walled);
  const watermarkFrom = walled.summary ? input.state.watermark : null;
  // Messages the user unpinned after a summary covered them: no summary tells them yet, so
  // this fold does (before the span: they are older), even when nothing else is left to fold.
  const pending = foldPendingIdsOf(input.history);
  const coveredPending = walled.keptPins.filter((m) => pending.has(m.id));
  const folds = span.length > 0 || coveredPending.length > 0;
  // A summary written for a larger window than this model's (the chat moved to a smaller one),
  // with nothing left to fold: shortened on its own once it is in the way, or the turn would be
  // refused, and Compact now with it, until enough new messages come to fold.
  const condense =
    !folds &&
    watermarkFrom !== null &&
    summaryOverBudget(input, walled.summary) &&
    (!underTrigger || input.force === true || !walled.fits);
  const watermarkTo = span[span.length - 1]?.id ?? (folds || condense ? watermarkFrom : null);
  if (!watermarkTo) {
    // Nothing between the watermark and the keep window: a dirty flag with nothing to
    // fold is simply settled; the hard wall already applies to this view.
    return skippedAsItWas(
      walled,
      tokensBefore,
      watermarkFrom,
      now() - startedAt,
      walled.fits
        ? "nothing to fold: the recent turns are all that is left"
        : "the latest message alone does not fit the context window",
    );
  }

  // Pinned messages stay verbatim in the view: the summarizer need not retell them.
  const toSummarize = [
    ...coveredPending,
    ...span.filter((m) => !walled.pinnedIds.has(m.id) || pending.has(m.id)),
  ];
  const foldedPendingIds = toSummarize.filter((m) => pending.has(m.id)).map((m) => m.id);
  input.onSummarizeStart?.({ tokensBefore, messages: toSummarize.length });
  const position = input.positions ?? new Map(input.history.map((m, i) => [m.id, i + 1]));
  const folded =
    toSummarize.length || condense
      ? await foldIntoSummary({
          previousSummary: walled.summary,
          span: toSummarize,
          positions: toSummarize.map((m) => position.get(m.id) ?? 0),
          summaryBudget: input.budget.summaryBudget,
          ledgerShare: input.ledgerShare,
          estimator: input.estimator,
          summarize: input.summarize,
          fallback: input.fallback,
          signal: input.signal,
        })
      : onlyPinsFolded(walled.summary);
  const next = { summary: folded.summary, watermark: watermarkTo };
  const stillPinned = foldedPendingIds.length
    ? new Set([...walled.pinnedIds].filter((id) => !foldedPendingIds.includes(id)))
    : input.pinnedIds;
  const { view, tokens: tokensAfter } = reachTarget(
    input,
    buildView({
      history: input.history,
      state: next,
      rules,
      limitTokens,
      estimator: input.estimator,
      pinnedIds: stillPinned,
    }),
  );
  // Compact now with only a little left since the last fold: a summary that grew by more than
  // the messages it took in saved nothing. Kept as it was; the chat does not grow for a click.
  // (A fold that must tell messages no summary tells yet — unpinned since — goes ahead, as does
  // one over a view the hard wall cut: the fold is what lifts the cut.)
  const savedNothing =
    input.force === true &&
    !condense &&
    walled.hardWallCapTokens === null &&
    coveredPending.length === 0 &&
    toSummarize.length > 0 &&
    tokensAfter >= tokensBefore;
  if (savedNothing) {
    return skippedAsItWas(
      walled,
      tokensBefore,
      watermarkFrom,
      now() - startedAt,
      `nothing to fold: summarizing the ${toSummarize.length} latest messages would not make the context smaller`,
    );
  }
  const missedTarget =
    tokensAfter > input.budget.target ? missedTargetNote(input, view, tokensAfter) : null;
  return {
    kind: "compacted",
    view,
    projectedTokens: tokensAfter,
    next,
    draft: {
      outcome: folded.outcome,
      tokensBefore,
      tokensAfter,
      messagesSummarized: span.length + coveredPending.length,
      watermarkFrom,
      watermarkTo,
      summary: folded.summary,
      summarizerModel: folded.summarizerModel,
      latencyMs: now() - startedAt,
      note:
        [condense ? condensedNote(input, walled.summary) : null, folded.note, missedTarget]
          .filter(Boolean)
          .join("; ") || null,
      foldedPendingIds,
    },
  };
}

/** Whether the summary takes more than this model's summary budget (it was written for another). */
function summaryOverBudget(input: Tier1Input, summary: string | null): boolean {
  return summary !== null && input.estimator.countText(summary) > input.budget.summaryBudget;
}

function condensedNote(input: Tier1Input, summary: string | null): string {
  const tokens = summary === null ? 0 : input.estimator.countText(summary);
  return `nothing new to fold: the summary (${tokens} tokens) was shortened to this model's summary budget (${input.budget.summaryBudget})`;
}

/** Everything the keep window leaves is pinned: the watermark moves, the summary stays as it is. */
function onlyPinsFolded(previous: string | null): FoldResult {
  // The user's notes alone tell nothing of what was folded: the line that says so comes first.
  const { rest, notes } = splitUserNotes(previous);
  return {
    summary: rest
      ? (previous?.trim() ?? rest)
      : (withUserNotes(ONLY_PINS_SUMMARY, notes) ?? ONLY_PINS_SUMMARY),
    outcome: "summarized",
    summarizerModel: null,
    note: "only pinned messages were folded; they stay verbatim",
  };
}

/** Tier 1 leaving the chat as it was (the view with the hard wall applied), saying why. */
function skippedAsItWas(
  walled: ModelView,
  tokensBefore: number,
  watermarkFrom: string | null,
  latencyMs: number,
  note: string,
) {
  return {
    kind: "skipped" as const,
    view: walled,
    projectedTokens: tokensBefore,
    draft: {
      outcome: "skipped" as const,
      tokensBefore,
      tokensAfter: tokensBefore,
      messagesSummarized: 0,
      watermarkFrom,
      watermarkTo: watermarkFrom,
      summary: walled.summary,
      summarizerModel: null,
      latencyMs,
      note,
      foldedPendingIds: [],
    },
  };
}

/**
 * What to fold: everything between the old watermark and the keep boundary.
 * The keep window must leave room for the summary and the overhead under the
 * target, or every compaction lands above it and fires again next turn (DESIGN §7).
 */
function spanToFold(input: Tier1Input, view: ModelView): FoldUIMessage[] {
  const { budget, ratio } = input;
  // Pins the summary already covers are sent verbatim beside it: they take room from the keep window.
  const pinTokens = view.keptPins.length ? input.estimator.estimateUIMessages(view.keptPins) : 0;
  const keepRoom = Math.min(
    budget.keepRecent,
    budget.target -
      budget.summaryBudget -
      Math.ceil(input.overheadTokens * ratio) -
      Math.ceil(pinTokens * ratio),
  );
  const keepRaw = Math.max(0, Math.floor(keepRoom / ratio));
  const pinnedTokens = view.pinned ? input.estimator.estimateUIMessages([view.pinned]) : 0;
  return view.after.slice(0, keepBoundary(view.after, keepRaw, input.estimator, pinnedTokens));
}
