import type { LanguageModel } from "ai";
import { fallbackDigest } from "@/lib/compaction/fallback";
import { foldTrigger, type ProjectionInput, projectNextTurn } from "@/lib/compaction/projection";
import { createSummarizer } from "@/lib/compaction/summarize";
import { runTier1, type SummarizePort, type Tier1Input } from "@/lib/compaction/tier1";
import type { TraceOutput } from "@/lib/compaction/trace";
import {
  buildView,
  type CompactionState,
  NO_VIEW_EDITS,
  type ViewRules,
} from "@/lib/compaction/view";
import type { Budget } from "@/lib/context/budget";
import type { ClassTokens } from "@/lib/context/content-class";
import { defaultEstimator } from "@/lib/context/tokens";
import type { Db } from "@/lib/db/client";
import { latestCompactionReason } from "@/lib/db/queries/compaction-events";
import type { NewMessage } from "@/lib/db/queries/messages";
import type { Chat, Message } from "@/lib/db/schema";
import { env } from "@/lib/env";
import { log, metric } from "@/lib/log";
import { pinnedIdsOf } from "@/lib/message/pins";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import type { ModelBudget } from "./budget";
import { commitTier1 } from "./commit-tier1";
import { summarizerModels } from "./summarizer-models";

/**
 * The imperative shell around Tier 1: pick the reason, give the pure core its
 * summarizer and fallback, then commit what it decided through the CAS writer.
 * Returns the view to send and the compaction version it belongs to.
 */

export type CompactReason =
  | "threshold"
  | "manual"
  | "overflow"
  | "length"
  | "truncated"
  | "invalidated";

export type CompactOutcome = {
  view: FoldUIMessage[];
  /** The chat version whose state produced `view` (stored with the turn's stats). */
  viewVersion: number;
  /** The projected size of this request; null when compaction is off (nothing projected). */
  projectedTokens: number | null;
  /** Set when a compaction was attempted: what the trace shows. */
  trace: TraceOutput | null;
  /** False when even the hard wall cannot fit the latest message. */
  fits: boolean;
  /** The hard-wall cap the view used (stored with the reply so it is never relaxed). */
  capTokens: number | null;
  /** The timeline's entry for a fold that was asked one (`CompactInput.timelineEntry`), as stored. */
  timelineEntry?: Message;
  /**
   * Where this chat folds (`foldTrigger`): the size at which the turn's Tier 2 trims its later
   * steps, so it does not cut toward the target a view Tier 1 let grow past the budget's trigger.
   */
  trigger: number;
};

export type CompactDeps = {
  db: Db;
  resolveModel: (modelId: string) => LanguageModel;
  now?: () => number;
};

export type CompactInput = {
  chat: Chat;
  history: readonly FoldUIMessage[];
  /** Each loaded message's number in the chat (`positionsOf`), which references cite. */
  positions?: ReadonlyMap<string, number>;
  model: ModelBudget;
  /** Raw tokens of the instructions and tool schemas every request carries. */
  overheadTokens: number;
  /** The same by content class, so Tier 1 calibrates it per class. */
  overheadClasses?: ClassTokens;
  force?: boolean;
  /** A timeline entry for the fold, stored with it (Compact now, a background fold; commitTier1). */
  timelineEntry?: (trace: TraceOutput) => NewMessage | null;
  /** Another compaction of this chat is running: fold nothing while the view fits (tier1.ts). */
  deferFold?: boolean;
  /** Tokens the next turn will add (its user message), for a compaction run ahead of it. */
  expectedTokens?: number;
  /** The turn's new message, still being stored: a fold is written only once it is. */
  stored?: Promise<void>;
  signal?: AbortSignal;
  /** Called right before the summarizer runs, so the trace can show "Compacting context…". */
  onSummarizeStart?: (info: {
    tokensBefore: number;
    messages: number;
    reason: CompactReason;
  }) => void;
};

/** The view edits (Stage 0) a turn's request gets at this budget: none with compaction off. */
export function turnViewRules(budget: Budget): ViewRules {
  const settings = env().compaction;
  return settings.enabled
    ? {
        bulkyToolTokens: budget.bulkyToolTokens,
        keepRecentToolResults: settings.keepRecentToolResults,
      }
    : NO_VIEW_EDITS;
}

export function stateOf(chat: Chat): CompactionState {
  return {
    summary: chat.contextSummary,
    watermark: chat.summaryWatermark,
    dirty: chat.compactionDirty,
    version: chat.version,
  };
}

/**
 * The next request's projected size for this chat, as Tier 1's first step computes it (the same
 * pins and calibration), so a decision made on it agrees with what Tier 1 then finds; the view it
 * projected (what the next turn sends unless it folds: Stage 0's edits, and the hard wall only
 * where an earlier turn's cap holds); and the size at which Tier 1 folds the chat
 * (`foldTrigger`, worked out only when asked), for a next turn that adds `nextMessageTokens`
 * (0: it only goes on).
 */
export function projectChat(
  input: Pick<CompactInput, "chat" | "history" | "model" | "overheadTokens" | "overheadClasses">,
  nextMessageTokens = 0,
) {
  const projection: ProjectionInput = {
    history: input.history,
    state: stateOf(input.chat),
    budget: input.model.budget,
    overheadTokens: input.overheadTokens,
    overheadClasses: input.overheadClasses,
    ratio: input.model.ratio,
    classRatios: input.model.classRatios,
    modelId: input.model.modelId,
    estimator: defaultEstimator,
    keepRecentToolResults: env().compaction.keepRecentToolResults,
    pinnedIds: pinnedIdsOf(input.history),
  };
  const { view, projectedTokens } = projectNextTurn(projection);
  return {
    projectedTokens,
    view: view.messages,
    trigger: () => foldTrigger(projection, view, nextMessageTokens),
  };
}

/** Why a dirty chat is dirty: the latest overflow, cut-short reply or silent cut, else an edit. */
async function dirtyReason(db: Db, chatId: string): Promise<CompactReason> {
  // Only the newest event's reason: not every summary the chat has had, read whole.
  const latest = await latestCompactionReason(db, chatId);
  return latest === "overflow" || latest === "length" || latest === "truncated"
    ? latest
    : "invalidated";
}

export async function compactChat(deps: CompactDeps, input: CompactInput): Promise<CompactOutcome> {
  const { db } = deps;
  const now = deps.now ?? Date.now;
  const { chat, history, model } = input;
  const state = stateOf(chat);
  const settings = env().compaction;

  if (!settings.enabled && !input.force) {
    // Off: Fold folds nothing on its own, and the whole stored history goes to the model
    // (recovery still guards it); a summary that is there already (Compact now, a continued
    // chat, the user's notes) is sent with what comes after it, as with compaction on.
    const view = buildView({
      history,
      state,
      rules: turnViewRules(model.budget),
      limitTokens: Number.POSITIVE_INFINITY,
      estimator: defaultEstimator,
      knownToFit: true,
      pinnedIds: pinnedIdsOf(history),
    }).messages;
    return {
      view,
      viewVersion: state.version,
      projectedTokens: null,
      trace: null,
      fits: true,
      capTokens: null,
      trigger: model.budget.trigger,
    };
  }

  const reason: CompactReason = input.force
    ? "manual"
    : state.dirty
      ? await dirtyReason(db, chat.id)
      : "threshold";
  // The summarizer cascade is resolved only when Tier 1 actually summarizes (not on the fast path).
  const summarize: SummarizePort = async (request) => {
    try {
      return await createSummarizer({
        models: await summarizerModels(model.modelId, deps.resolveModel, db),
        timeoutMs: settings.summarizerTimeoutMs,
        estimator: defaultEstimator,
        onMetric: metric,
      })(request);
    } catch (error) {
      // The trace shows a short cause; the raw text (provider bodies, URLs) stays here.
      if (!request.signal?.aborted) log.warn({ err: error, chatId: chat.id }, "summarizer failed");
      throw error;
    }
  };
  const startedAt = now();
  const tier1Input: Tier1Input = {
    history,
    state,
    budget: model.budget,
    overheadTokens: input.overheadTokens,
    overheadClasses: input.overheadClasses,
    ratio: model.ratio,
    classRatios: model.classRatios,
    modelId: model.modelId,
    estimator: defaultEstimator,
    keepRecentToolResults: settings.keepRecentToolResults,
    pinnedIds: pinnedIdsOf(history),
    ledgerShare: settings.ledgerShare,
    positions: input.positions,
    force: input.force,
    deferFold: input.deferFold,
    expectedTokens: input.expectedTokens,
    signal: input.signal,
    now,
    onSummarizeStart: (info) => input.onSummarizeStart?.({ ...info, reason }),
    summarize,
    fallback: ({ previousSummary, span, budgetTokens }) =>
      fallbackDigest({
        previousSummary,
        span,
        budgetTokens,
        countTokens: (text) => defaultEstimator.countText(text),
      }),
  };
  const result = await runTier1(tier1Input);
  const trigger = foldTrigger(tier1Input, result.view);
  metric("compaction.check", {
    chatId: chat.id,
    kind: result.kind,
    projected: result.projectedTokens,
    trigger,
  });

  if (result.kind === "noop") {
    return {
      view: result.view.messages,
      viewVersion: state.version,
      projectedTokens: result.projectedTokens,
      trace: null,
      fits: result.view.fits,
      capTokens: result.view.hardWallCapTokens,
      trigger,
    };
  }
  await input.stored;
  const committed = await commitTier1(db, {
    chat,
    state,
    result,
    reason,
    history,
    model,
    overheadTokens: input.overheadTokens,
    keepRecentToolResults: settings.keepRecentToolResults,
    durationMs: now() - startedAt,
    timelineEntry: input.timelineEntry,
  });
  return { ...committed, trigger };
}
