import type { ModelMessage, PrepareStepFunction, ToolSet } from "ai";
import type { Budget } from "@/lib/context/budget";
import type { ClassRatios } from "@/lib/context/content-class";
import type { TokenEstimator } from "@/lib/context/tokens";
import { foldEarlierSteps } from "./fold-steps";
import { ignoreMetrics, type MetricSink } from "./ports";
import { type RecoveryEvent, refusedSkew } from "./recovery";
import { type Pinned, trimToFit } from "./trim";

/**
 * Tier 2 (DESIGN §9): the `prepareStep` hook. A turn with many tool calls can
 * overflow with no growth across turns; before each step after the first,
 * project the step's size from the previous step's real usage plus the new
 * tool results, and above the trigger trim in memory toward the target.
 * Not persisted: the next turn's Tier 1 folds the turn into the summary.
 */

/** A trim that saves less than this share, on messages Fold already counts as fitting, is not repeated this turn. */
const STALL_SAVING_SHARE = 0.05;
/** The fold note of earlier steps may take this share of the room for messages, at most the summary budget. */
const FOLD_NOTE_SHARE = 0.2;

export type Tier2Options = {
  budget: Budget;
  /** Calibrated ratio of real to estimated tokens, overall. */
  ratio: number;
  /** The same per content class, for estimates of messages (the overall ratio when absent). */
  classRatios?: ClassRatios;
  /** Raw tokens of instructions and tool schemas. */
  overheadTokens: number;
  estimator: TokenEstimator;
  keepRecentToolResults: number;
  /** What the user pinned (trim.ts, Pinned): cut last. */
  pinned?: Pinned;
  /**
   * What recovery said when it trimmed a request since the last call, or null (and forget it):
   * it trims only the provider call, so the step's messages are still the untrimmed ones and
   * its usage counts the trimmed prompt. The next step is then trimmed whatever that usage
   * says, by the provider's count of the refused prompt where it gave one.
   */
  takeRecovery?: () => Pick<RecoveryEvent, "tokensBefore" | "reportedTokens"> | null;
  onTrim?: (info: {
    stepNumber: number;
    projectedTokens: number;
    before: number;
    after: number;
  }) => void;
  onMetric?: MetricSink;
};

/** Messages after the last assistant message: the tool results the next step adds. */
function trailingToolMessages(messages: readonly ModelMessage[]): ModelMessage[] {
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  return messages.slice(lastAssistant + 1).filter((m) => m.role === "tool");
}

/** How many tool results the messages carry. */
function resultCount(messages: readonly ModelMessage[]): number {
  let count = 0;
  for (const message of messages) {
    if (typeof message.content === "string") continue;
    for (const part of message.content) if (part.type === "tool-result") count += 1;
  }
  return count;
}

export function createTier2<TOOLS extends ToolSet>(
  options: Tier2Options,
): PrepareStepFunction<TOOLS> {
  const { budget, ratio, estimator } = options;
  const messageRatio = options.classRatios ?? ratio;
  const metric = options.onMetric ?? ignoreMetrics;
  // The provider counts more than Fold's estimate and there is nothing left to cut: stop trying.
  let stalled = false;
  return ({ steps, messages, stepNumber }) => {
    // The first step is what Tier 1 sized.
    if (steps.length === 0) return undefined;
    const recovery = options.takeRecovery?.() ?? null;
    const recovered = recovery !== null;
    // The provider refused what Fold counted as fitting: trying again is worth it.
    if (recovered) stalled = false;
    if (stalled) return undefined;
    const usage = steps[steps.length - 1]?.usage;
    const projectedTokens =
      usage?.inputTokens !== undefined
        ? usage.inputTokens +
          (usage.outputTokens ?? 0) +
          estimator.estimateModelMessages(trailingToolMessages(messages), { ratio: messageRatio })
        : Math.ceil(options.overheadTokens * ratio) +
          estimator.estimateModelMessages(messages, { ratio: messageRatio });
    if (projectedTokens < budget.trigger && !recovered) return undefined;

    // After a refusal the provider's count of the refused prompt says how far Fold under-counts.
    const skew = recovery
      ? refusedSkew(ratio, recovery.reportedTokens, recovery.tokensBefore, options.overheadTokens)
      : ratio;
    const limitTokens = Math.max(0, Math.floor(budget.target / skew) - options.overheadTokens);
    const estimate = (list: ModelMessage[]) => estimator.estimateModelMessages(list);
    const trimOptions = {
      limitTokens,
      // The results the model is about to read are never placeholders, whatever the setting
      // (COMPACTION_KEEP_RECENT_TOOL_RESULTS=0 would have it fetch them again, and again).
      keepRecentToolResults: Math.max(
        options.keepRecentToolResults,
        resultCount(trailingToolMessages(messages)),
      ),
      estimate,
      force: true,
      pinned: options.pinned,
    };
    // The summary and pinned messages are spared while anything else can make room.
    const trimmed = trimToFit(messages, { ...trimOptions, keepSummary: true });
    // Cutting is not enough: fold the loop's earlier steps into a note, keep the newest steps
    // (sized as cut, so as many as fit are kept); cut again only as far as the room needs.
    const folded = trimmed.fits
      ? { ...trimmed, folded: 0 }
      : foldEarlierSteps(trimmed.messages, {
          limitTokens,
          noteTokens: Math.floor(
            Math.min(budget.summaryBudget / ratio, FOLD_NOTE_SHARE * limitTokens),
          ),
          estimate,
          countText: (text) => estimator.countText(text),
        });
    const refit =
      folded.folded > 0
        ? trimToFit(folded.messages, { ...trimOptions, keepSummary: true })
        : trimmed;
    // Still too long for the target: what fits under the trigger (raised where pinned messages
    // or the summary need it: foldTrigger) goes with them whole, and only past it are the
    // summary and pinned messages cut too.
    const spared = refit.fits
      ? refit
      : trimToFit(refit.messages, {
          ...trimOptions,
          limitTokens: Math.max(0, Math.floor(budget.trigger / skew) - options.overheadTokens),
          keepSummary: true,
        });
    const last = spared.fits ? spared : trimToFit(spared.messages, trimOptions);
    const result = { before: trimmed.before, after: last.after };
    // Not after a refusal: Fold's count was wrong there, not the room left to cut.
    if (!recovered && trimmed.fits && trimmed.after > trimmed.before * (1 - STALL_SAVING_SHARE))
      stalled = true;
    metric("compaction.tier2", { stepNumber, projectedTokens, ...result, folded: folded.folded });
    options.onTrim?.({ stepNumber, projectedTokens, ...result });
    return { messages: last.messages };
  };
}
