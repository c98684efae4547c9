import type { LanguageModel } from "ai";
import { eq } from "drizzle-orm";
import { parseModelId } from "@/lib/ai/model-id";
import type { FoldUIMessage } from "@/lib/chat/ui-message";
import type { Budget } from "@/lib/context/budget";
import { effectiveRatio } from "@/lib/context/calibration";
import { defaultEstimator } from "@/lib/context/tokens";
import type { Db } from "@/lib/db/client";
import { commitCompactionState } from "@/lib/db/compaction-state";
import { getCalibration } from "@/lib/db/queries/calibration";
import { listCompactionEvents, recordCompactionEvent } from "@/lib/db/queries/compaction-events";
import { type Chat, chat as chatTable } from "@/lib/db/schema";
import { env } from "@/lib/env";
import { metric } from "@/lib/log";
import { budgetFor, summarizerModels } from "./config";
import { fallbackDigest } from "./fallback";
import { createSummarizer } from "./summarize";
import { runTier1, type SummarizePort, type Tier1Result } from "./tier1";
import { savedPct, type TraceOutput } from "./trace";
import { buildView, type CompactionState, stripTrace, type ViewRules } from "./view";

/**
 * The imperative shell around Tier 1: read the budget and calibration, run the
 * pure core, commit through the CAS writer, record the event. Returns the view
 * to send and the compaction version it belongs to.
 */

export type CompactReason = "threshold" | "manual" | "overflow" | "length" | "invalidated";

export type CompactOutcome = {
  view: FoldUIMessage[];
  /** The chat version whose state produced `view` (stored with the turn's stats). */
  viewVersion: number;
  /** The projected size of this request; null when compaction is off (nothing projected). */
  projectedTokens: number | null;
  contextWindow: number;
  budget: Budget;
  /** The model's calibrated ratio of real to estimated tokens. */
  ratio: number;
  /** Set when a compaction was attempted: what the trace shows. */
  trace: TraceOutput | null;
  /** False when even the hard wall cannot fit the latest message. */
  fits: boolean;
  /** The hard-wall cap the view used (stored with the reply so it is never relaxed). */
  capTokens: number | null;
};

export type CompactDeps = {
  db: Db;
  resolveModel: (modelId: string) => LanguageModel;
  now?: () => number;
};

/** Why a dirty chat is dirty: the latest overflow or cut-short reply, else an edit. */
async function dirtyReason(db: Db, chatId: string): Promise<CompactReason> {
  const [latest] = await listCompactionEvents(db, chatId);
  return latest?.reason === "overflow" || latest?.reason === "length"
    ? latest.reason
    : "invalidated";
}

export function stateOf(chat: Chat): CompactionState {
  return {
    summary: chat.contextSummary,
    watermark: chat.summaryWatermark,
    dirty: chat.compactionDirty,
    version: chat.version,
  };
}

export async function compactChat(
  deps: CompactDeps,
  input: {
    chat: Chat;
    history: readonly FoldUIMessage[];
    modelId: string;
    overheadTokens: number;
    force?: boolean;
    signal?: AbortSignal;
    /** Called right before the summarizer runs, so the trace can show "Compacting context…". */
    onSummarizeStart?: (info: {
      tokensBefore: number;
      messages: number;
      reason: CompactReason;
    }) => void;
  },
): Promise<CompactOutcome> {
  const { db } = deps;
  const now = deps.now ?? Date.now;
  const { chat, history, modelId } = input;
  const state = stateOf(chat);
  const { budget, contextWindow } = await budgetFor(modelId);
  const parsed = parseModelId(modelId);
  const ratio = effectiveRatio(
    parsed ? await getCalibration(db, parsed.provider, parsed.model) : null,
  );

  if (!env().compaction.enabled && !input.force) {
    // Off: the whole stored history goes to the model (recovery still guards it).
    return {
      view: stripTrace(history),
      viewVersion: state.version,
      projectedTokens: null,
      contextWindow,
      budget,
      ratio,
      trace: null,
      fits: true,
      capTokens: null,
    };
  }

  const reason: CompactReason = input.force
    ? "manual"
    : state.dirty
      ? await dirtyReason(db, chat.id)
      : "threshold";
  // The summarizer cascade is resolved only when Tier 1 actually summarizes (not on the fast path).
  const summarizer: SummarizePort = async (request) =>
    createSummarizer({
      models: await summarizerModels(modelId, deps.resolveModel),
      timeoutMs: env().compaction.summarizerTimeoutMs,
      estimator: defaultEstimator,
    })(request);
  const started = now();
  const result = await runTier1({
    history,
    state,
    budget,
    overheadTokens: input.overheadTokens,
    ratio,
    modelId,
    estimator: defaultEstimator,
    keepRecentToolResults: env().compaction.keepRecentToolResults,
    force: input.force,
    signal: input.signal,
    now,
    onSummarizeStart: (info) => input.onSummarizeStart?.({ ...info, reason }),
    summarize: summarizer,
    fallback: ({ previousSummary, span, budgetTokens }) =>
      fallbackDigest({
        previousSummary,
        span,
        budgetTokens,
        countTokens: (t) => defaultEstimator.countText(t),
      }),
  });
  metric("compaction.check", {
    chatId: chat.id,
    kind: result.kind,
    projected: result.projectedTokens,
    trigger: budget.trigger,
  });

  if (result.kind === "noop") {
    return {
      view: result.view.messages,
      viewVersion: state.version,
      projectedTokens: result.projectedTokens,
      contextWindow,
      budget,
      ratio,
      trace: null,
      fits: result.view.fits,
      capTokens: result.view.hardWallCapTokens,
    };
  }
  const rules = {
    bulkyToolTokens: budget.bulkyToolTokens,
    keepRecentToolResults: env().compaction.keepRecentToolResults,
  };
  const limitTokens = Math.max(0, Math.floor(budget.inputBudget / ratio) - input.overheadTokens);
  return settle(db, {
    chat,
    state,
    result,
    reason,
    history,
    contextWindow,
    budget,
    ratio,
    started,
    now,
    rules,
    limitTokens,
  });
}

async function settle(
  db: Db,
  ctx: {
    chat: Chat;
    state: CompactionState;
    result: Exclude<Tier1Result, { kind: "noop" }>;
    reason: CompactReason;
    history: readonly FoldUIMessage[];
    contextWindow: number;
    budget: Budget;
    ratio: number;
    started: number;
    now: () => number;
    rules: ViewRules;
    limitTokens: number;
  },
): Promise<CompactOutcome> {
  const { chat, state, result, reason } = ctx;
  const draft = result.draft;
  const baseTrace = {
    reason,
    tokensBefore: draft.tokensBefore,
    tokensAfter: draft.tokensAfter,
    savedPct: savedPct(draft.tokensBefore, draft.tokensAfter),
    messagesSummarized: draft.messagesSummarized,
    summarizerModel: draft.summarizerModel,
    durationMs: ctx.now() - ctx.started,
    summary: draft.summary,
    note: draft.note,
  };

  if (result.kind === "skipped") {
    // Nothing to fold: settle a dirty flag (and a summary whose watermark is gone) so
    // the next turn takes the fast path again.
    if (state.dirty || result.view.watermarkMissing) {
      await commitCompactionState(db, {
        chatId: chat.id,
        expectedVersion: state.version,
        patch: result.view.watermarkMissing
          ? { contextSummary: null, summaryWatermark: null, compactionDirty: false }
          : { compactionDirty: false },
        rebase: () => "covered",
      });
    }
    await recordCompactionEvent(db, {
      chatId: chat.id,
      reason,
      outcome: "skipped",
      tokensBefore: draft.tokensBefore,
      tokensAfter: draft.tokensAfter,
      messagesSummarized: 0,
      watermarkFrom: draft.watermarkFrom,
      watermarkTo: draft.watermarkTo,
      summary: null,
      summarizerModel: null,
      latencyMs: draft.latencyMs,
      error: draft.note,
    });
    const [fresh] = await db
      .select({ version: chatTable.version })
      .from(chatTable)
      .where(eq(chatTable.id, chat.id));
    return {
      view: result.view.messages,
      viewVersion: fresh?.version ?? state.version,
      projectedTokens: result.projectedTokens,
      contextWindow: ctx.contextWindow,
      budget: ctx.budget,
      ratio: ctx.ratio,
      trace: { ...baseTrace, outcome: "skipped" },
      fits: result.view.fits,
      capTokens: result.view.hardWallCapTokens,
    };
  }

  const commit = await commitCompactionState(db, {
    chatId: chat.id,
    expectedVersion: state.version,
    patch: {
      contextSummary: result.next.summary,
      summaryWatermark: result.next.watermark,
      compactionDirty: false,
    },
    // Retry over a winner only when it left the summary we built on untouched (it
    // merely flagged the chat); anything else — a newer summary, a rollback — wins.
    rebase: (current) =>
      current.contextSummary === state.summary && current.summaryWatermark === state.watermark
        ? {
            contextSummary: result.next.summary,
            summaryWatermark: result.next.watermark,
            compactionDirty: false,
          }
        : "covered",
  });
  const written = commit?.status === "written";
  await recordCompactionEvent(db, {
    chatId: chat.id,
    reason,
    outcome: written ? draft.outcome : "conflict",
    tokensBefore: draft.tokensBefore,
    tokensAfter: draft.tokensAfter,
    messagesSummarized: draft.messagesSummarized,
    watermarkFrom: draft.watermarkFrom,
    watermarkTo: draft.watermarkTo,
    summary: draft.summary,
    summarizerModel: draft.summarizerModel,
    latencyMs: draft.latencyMs,
    error: draft.note,
  });
  metric("compaction.fired", {
    chatId: chat.id,
    reason,
    outcome: written ? draft.outcome : "conflict",
    before: draft.tokensBefore,
    after: draft.tokensAfter,
    messages: draft.messagesSummarized,
  });
  if (draft.outcome === "fallback")
    metric("summarize.fallback", { chatId: chat.id, note: draft.note });

  if (written && commit) {
    return {
      view: result.view.messages,
      viewVersion: commit.chat.version,
      projectedTokens: result.projectedTokens,
      contextWindow: ctx.contextWindow,
      budget: ctx.budget,
      ratio: ctx.ratio,
      trace: { ...baseTrace, outcome: draft.outcome },
      fits: result.view.fits,
      capTokens: result.view.hardWallCapTokens,
    };
  }
  // Lost the race: send the winner's view instead of ours.
  const winner = commit?.chat ?? chat;
  const view = buildView({
    history: ctx.history,
    state: { summary: winner.contextSummary, watermark: winner.summaryWatermark },
    rules: ctx.rules,
    limitTokens: ctx.limitTokens,
    estimator: defaultEstimator,
  });
  return {
    view: view.messages,
    viewVersion: winner.version,
    projectedTokens: result.projectedTokens,
    contextWindow: ctx.contextWindow,
    budget: ctx.budget,
    ratio: ctx.ratio,
    trace: { ...baseTrace, outcome: "conflict" },
    fits: view.fits,
    capTokens: view.hardWallCapTokens,
  };
}
