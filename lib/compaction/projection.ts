import type { Budget } from "@/lib/context/budget";
import { addClassTokens, type ClassRatios, type ClassTokens } from "@/lib/context/content-class";
import { applyRatio, type TokenEstimator } from "@/lib/context/tokens";
import { sentInRoom } from "@/lib/message/stats";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import {
  buildView,
  type CompactionState,
  type ModelView,
  NO_VIEW_EDITS,
  splitAtWatermark,
} from "./view";

/**
 * How big the next request will be (DESIGN §5, §8.2): the first half of Tier 1
 * and what the context ring shows. Real usage first — the provider's count of
 * the last request plus an estimate of what came after — never below an
 * estimate of what is actually sent.
 */

export type ProjectionInput = {
  history: readonly FoldUIMessage[];
  state: CompactionState;
  budget: Budget;
  /** Raw tokens of the system prompt and tool schemas. */
  overheadTokens: number;
  /** The same by content class; with `classRatios`, the overhead is calibrated per class too. */
  overheadClasses?: ClassTokens;
  /** Calibrated ratio of real to estimated tokens for this model, overall. */
  ratio: number;
  /** The same per content class, for estimates of messages (the overall ratio when absent). */
  classRatios?: ClassRatios;
  modelId: string;
  estimator: TokenEstimator;
  keepRecentToolResults: number;
  /** Messages the user pinned (issue 14): sent verbatim even when the summary covers them. */
  pinnedIds?: ReadonlySet<string>;
  /**
   * With compaction off, a turn sends old tool results whole and every message, with no room
   * to cut to (lib/chat/compact.ts): the view it projects does too. Absent, the turn's rules.
   */
  compactionOff?: boolean;
};

/** Raw room for messages: what the input budget leaves after the overhead, in uncalibrated tokens. */
export function messageRoom(input: ProjectionInput): number {
  return Math.max(0, Math.floor(input.budget.inputBudget / input.ratio) - input.overheadTokens);
}

/** The last reply sent within this compaction version, if any: its real usage describes this view. */
function lastReplyOfVersion(input: ProjectionInput, after: readonly FoldUIMessage[]) {
  for (let i = after.length - 1; i >= 0; i--) {
    const stats = after[i]?.metadata?.stats;
    if (!stats) continue;
    return stats.viewVersion === input.state.version ? { index: i, stats } : null;
  }
  return null;
}

/**
 * Tokens Stage 0 saves now on results the last request still sent whole: the
 * results its own turn produced (added after Stage 0 ran), and the ones that
 * were still among the newest before that turn.
 */
function stage0Savings(input: ProjectionInput, view: ModelView, lastIndex: number): number {
  // Off: nothing is cut, so the last request sent all it would send now.
  if (input.compactionOff) return 0;
  const offset = view.messages.length - view.after.length;
  let olderSeen = 0;
  let savings = 0;
  for (let i = lastIndex; i >= 0; i--) {
    const original = view.after[i];
    const edited = view.messages[i + offset];
    if (!original || !edited) break;
    const ownTurn = i === lastIndex;
    if (!ownTurn && olderSeen >= input.keepRecentToolResults) break;
    for (let j = original.parts.length - 1; j >= 0; j--) {
      const part = original.parts[j];
      if (!part || !("toolCallId" in part) || part.state !== "output-available") continue;
      const sentWhole = ownTurn || olderSeen < input.keepRecentToolResults;
      if (!ownTurn) olderSeen++;
      const now = edited.parts[j];
      if (sentWhole && now && "output" in now && now.output !== part.output) {
        const before =
          typeof part.output === "string" ? part.output : (JSON.stringify(part.output) ?? "");
        savings +=
          input.estimator.countText(before) - input.estimator.countText(String(now.output));
      }
    }
  }
  return Math.max(0, savings);
}

/**
 * Fold's calibrated estimate of a request carrying `messages`: overhead and messages by
 * content class times the per-class ratios (what a turn records and calibration learns
 * from), or times the overall ratio when the classes are not known.
 */
export function viewTokens(
  input: Pick<
    ProjectionInput,
    "overheadTokens" | "overheadClasses" | "estimator" | "ratio" | "classRatios"
  >,
  messages: ModelView["messages"],
): number {
  const { classRatios, overheadClasses, estimator } = input;
  if (classRatios && overheadClasses) {
    const tokens = estimator.classTokensOfUIMessages(messages);
    addClassTokens(tokens, overheadClasses);
    return applyRatio(tokens, classRatios);
  }
  if (classRatios) {
    return (
      Math.ceil(input.overheadTokens * input.ratio) +
      estimator.estimateUIMessages(messages, { ratio: classRatios })
    );
  }
  return Math.ceil((input.overheadTokens + estimator.estimateUIMessages(messages)) * input.ratio);
}

/**
 * The next request's size. Real usage first: when the last reply was sent
 * this view's compaction version by this model at this window, its provider count (less what
 * Stage 0 has replaced since) plus an estimate of what came after. Never below
 * the calibrated estimate of the view itself: stored usage that disagrees with
 * the content (a turn whose usage is far below what it stored) must not let a
 * request skip the caps and overflow.
 */
export function projectTokens(input: ProjectionInput, view: ModelView): number {
  const { ratio, estimator } = input;
  const estimated = viewTokens(input, view.messages);
  const last = lastReplyOfVersion(input, view.after);
  // Real usage describes this view only if no request of that turn was trimmed in memory.
  if (
    last &&
    sentInRoom(last.stats, input.modelId, input.budget.contextWindow) &&
    !last.stats.viewTrimmed
  ) {
    const since = view.after.slice(last.index + 1);
    const fromUsage =
      last.stats.contextTokens +
      (last.stats.lastStepOutputTokens ?? last.stats.outputTokens) -
      Math.floor(stage0Savings(input, view, last.index) * ratio) +
      estimator.estimateUIMessages(since, { ratio: input.classRatios ?? ratio });
    return Math.max(fromUsage, estimated);
  }
  return estimated;
}

/**
 * The least a fold can leave of this view, calibrated: Fold's frame, a summary as long as its
 * budget, and what neither a fold nor the hard wall shortens — the messages the user pinned and
 * the latest user message. With `nextMessageTokens` (a fold run ahead of a turn that brings a
 * new message that long) that message is the latest in its place.
 */
export function foldFloor(input: ProjectionInput, view: ModelView, nextMessageTokens = 0): number {
  const kept = new Set(view.pinnedIds);
  const latestUser = view.pinned ?? view.after.findLast((m) => m.role === "user");
  if (nextMessageTokens === 0 && latestUser) kept.add(latestUser.id);
  const messages = view.messages.filter((m) => kept.has(m.id));
  return viewTokens(input, messages) + input.budget.summaryBudget + nextMessageTokens;
}

/**
 * Where this chat folds (DESIGN §7): the budget's trigger, unless the least a fold can leave
 * (`foldFloor`) is over the target. A fold then lands over the target, and at the budget's
 * trigger the next step or two would fold again, each fold a summarizer call — a long task
 * message that is the only user message of an agent's run, a long pinned message on a small
 * window. The trigger then keeps the budget's gap (trigger − target) above that floor, never
 * above the input budget, so folds are spaced as they are when the target can be reached.
 */
export function foldTrigger(
  input: ProjectionInput,
  view: ModelView,
  nextMessageTokens = 0,
): number {
  const { budget } = input;
  const floor = foldFloor(input, view, nextMessageTokens);
  if (floor <= budget.target) return budget.trigger;
  const spaced = floor + budget.trigger - budget.target;
  return Math.max(budget.trigger, Math.min(budget.inputBudget, spaced));
}

function splitAfter(input: ProjectionInput): FoldUIMessage[] {
  return splitAtWatermark(input.history, input.state.summary ? input.state.watermark : null).after;
}

/**
 * The view the next turn would send and its projected size — the first half
 * of Tier 1, also what the context ring shows. Cheap: real usage plus the
 * messages since, with no hard-wall estimate unless an earlier turn needed one.
 */
export function projectNextTurn(input: ProjectionInput) {
  const rules = input.compactionOff
    ? NO_VIEW_EDITS
    : {
        bulkyToolTokens: input.budget.bulkyToolTokens,
        keepRecentToolResults: input.keepRecentToolResults,
      };
  const limitTokens = input.compactionOff ? Number.POSITIVE_INFINITY : messageRoom(input);
  // A hard-wall cap an earlier turn of this version applied stays until the next compaction,
  // while the room it was cut for does: another model, or a window that changed since, sizes
  // the view afresh (a cap from a small window would cut every message of a large one).
  const last = lastReplyOfVersion(input, splitAfter(input));
  const sameRoom = last && sentInRoom(last.stats, input.modelId, input.budget.contextWindow);
  const priorCapTokens = sameRoom ? (last.stats.viewCapTokens ?? null) : null;
  const view = buildView({
    history: input.history,
    state: input.state,
    rules,
    limitTokens,
    estimator: input.estimator,
    knownToFit: true,
    priorCapTokens,
    pinnedIds: input.pinnedIds,
  });
  return { view, projectedTokens: projectTokens(input, view), rules, limitTokens, priorCapTokens };
}
