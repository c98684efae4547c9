import { TransactionRollbackError } from "drizzle-orm";
import type { Tier1Result } from "@/lib/compaction/tier1";
import { savedPct, type TraceOutput } from "@/lib/compaction/trace";
import { buildView, type CompactionState } from "@/lib/compaction/view";
import { defaultEstimator } from "@/lib/context/tokens";
import type { Db } from "@/lib/db/client";
import { commitCompactionState } from "@/lib/db/compaction-state";
import { getChatVersion } from "@/lib/db/queries/chats";
import { recordCompactionEvent } from "@/lib/db/queries/compaction-events";
import {
  appendMessage,
  appendMessageInTransaction,
  holdsMessageAsRead,
  type NewMessage,
  settleFoldedUnpins,
} from "@/lib/db/queries/messages";
import type { Chat } from "@/lib/db/schema";
import { metric } from "@/lib/log";
import { pinnedIdsOf } from "@/lib/message/pins";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import type { ModelBudget } from "./budget";
import type { CompactOutcome, CompactReason } from "./compact";

type Decided = Exclude<Tier1Result, { kind: "noop" }>;

export type CommitTier1Input = {
  chat: Chat;
  /** The state Tier 1 read: the CAS expects its version. */
  state: CompactionState;
  result: Decided;
  reason: CompactReason;
  history: readonly FoldUIMessage[];
  model: ModelBudget;
  overheadTokens: number;
  keepRecentToolResults: number;
  durationMs: number;
  /**
   * The timeline's entry for this fold (Compact now, a background fold), made from its trace:
   * written in the summary's transaction, so the chat is never folded without it (or it without
   * the fold). Asked again with a "conflict" trace when the fold lost; null stores no entry.
   */
  timelineEntry?: (trace: TraceOutput) => NewMessage | null;
};

/**
 * Writes what Tier 1 decided: a new summary and watermark through the CAS
 * writer (or, when there was nothing to fold, settles the dirty flag), and
 * one `compaction_event` row either way. A loser sends the winner's view.
 */
export async function commitTier1(
  db: Db,
  input: CommitTier1Input,
): Promise<Omit<CompactOutcome, "trigger">> {
  const { result } = input;
  const draft = result.draft;
  const trace = (outcome: TraceOutput["outcome"]): TraceOutput => ({
    outcome,
    reason: input.reason,
    tokensBefore: draft.tokensBefore,
    tokensAfter: draft.tokensAfter,
    savedPct: savedPct(draft.tokensBefore, draft.tokensAfter),
    messagesSummarized: draft.messagesSummarized,
    summarizerModel: draft.summarizerModel,
    durationMs: input.durationMs,
    summary: draft.summary,
    note: draft.note,
  });
  const outcome = (
    view: Decided["view"],
    viewVersion: number,
    t: TraceOutput,
  ): Omit<CompactOutcome, "trigger"> => ({
    view: view.messages,
    viewVersion,
    projectedTokens: result.projectedTokens,
    trace: t,
    fits: view.fits,
    capTokens: view.hardWallCapTokens,
  });

  if (result.kind === "skipped") {
    await settleSkipped(db, input, result);
    return outcome(
      result.view,
      await getChatVersion(db, input.chat.id, input.state.version),
      trace("skipped"),
    );
  }

  const event = (won: boolean) => ({
    chatId: input.chat.id,
    reason: input.reason,
    outcome: won ? draft.outcome : ("conflict" as const),
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
  // The summary, its event and the unpinned messages it tells, in one transaction. The event
  // is the rollback point an edit of an earlier message returns to: a summary stored without
  // it is lost to the next rollback. Unpinned messages settled apart from their summary could
  // be left, by a rollback between the two, told by no summary and sent by no turn.
  let lostTo: Chat | undefined;
  const written = await db
    .transaction(async (txn) => {
      const tx = txn as unknown as Db;
      // The entry first: every append takes its message's place before the chat row.
      const made = input.timelineEntry?.(trace(draft.outcome));
      const entry = made ? await appendMessageInTransaction(tx, input.chat.id, made) : undefined;
      const summary = await writeSummary(tx, input, result);
      if (!summary.won) {
        // An entry for a fold that did not land goes with it (one saying so follows).
        if (entry) {
          lostTo = summary.chat;
          txn.rollback();
        }
        return { ...summary, entry };
      }
      if (draft.foldedPendingIds.length > 0)
        await settleFoldedUnpins(tx, input.chat.id, draft.foldedPendingIds);
      await recordCompactionEvent(tx, event(true));
      return { ...summary, entry };
    })
    .catch((error: unknown) => {
      if (!(lostTo && error instanceof TransactionRollbackError)) throw error;
      return { won: false, chat: lostTo, entry: undefined };
    });
  if (!written.won) {
    await recordCompactionEvent(db, event(false));
    const lost = input.timelineEntry?.(trace("conflict"));
    if (lost) written.entry = await appendMessage(db, input.chat.id, lost);
  }
  metric("compaction.fired", {
    chatId: input.chat.id,
    reason: input.reason,
    outcome: written.won ? draft.outcome : "conflict",
    before: draft.tokensBefore,
    after: draft.tokensAfter,
    messages: draft.messagesSummarized,
  });
  if (draft.outcome === "fallback")
    metric("summarize.fallback", { chatId: input.chat.id, note: draft.note });
  if (written.won) {
    return {
      ...outcome(result.view, written.chat.version, trace(draft.outcome)),
      timelineEntry: written.entry,
    };
  }

  // Lost the race: send the winner's view instead of ours.
  const winner = written.chat;
  const view = buildView({
    history: input.history,
    state: { summary: winner.contextSummary, watermark: winner.summaryWatermark },
    rules: {
      bulkyToolTokens: input.model.budget.bulkyToolTokens,
      keepRecentToolResults: input.keepRecentToolResults,
    },
    limitTokens: Math.max(
      0,
      Math.floor(input.model.budget.inputBudget / input.model.ratio) - input.overheadTokens,
    ),
    estimator: defaultEstimator,
    // Every message kept verbatim as the history has it: what this fold told but did not
    // settle (it lost) is still pending, and the winner may not have told it.
    pinnedIds: pinnedIdsOf(input.history),
  });
  return { ...outcome(view, winner.version, trace("conflict")), timelineEntry: written.entry };
}

/** Nothing to fold: settle a dirty flag (and a summary whose watermark is gone), record the skip. */
async function settleSkipped(
  db: Db,
  input: CommitTier1Input,
  result: Extract<Decided, { kind: "skipped" }>,
): Promise<void> {
  const { state, chat } = input;
  const draft = result.draft;
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
    reason: input.reason,
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
}

/** The new summary and watermark through the CAS writer; `won` false when another writer won. */
async function writeSummary(
  db: Db,
  input: CommitTier1Input,
  result: Extract<Decided, { kind: "compacted" }>,
): Promise<{ won: boolean; chat: Chat }> {
  const { state } = input;
  const patch = {
    contextSummary: result.next.summary,
    summaryWatermark: result.next.watermark,
    compactionDirty: false,
  };
  const commit = await commitCompactionState(db, {
    chatId: input.chat.id,
    expectedVersion: state.version,
    expectedHistoryVersion: input.chat.historyVersion,
    // A rewrite starting after the new watermark (a regenerated last reply, beside a background
    // fold) leaves what this summary covers as it was: the watermark message is still there as
    // read, and so is everything before it.
    coveredUnchanged: async () => {
      const watermark = input.history.find((m) => m.id === result.next.watermark);
      return (
        watermark !== undefined &&
        (await holdsMessageAsRead(db, input.chat.id, watermark.id, watermark.parts))
      );
    },
    patch,
    // Retry over a winner only when it left the summary we built on untouched (it
    // merely flagged the chat); anything else — a newer summary, a rollback — wins. A flag
    // set since this fold read the chat stays: what set it (an overflow, a silent cut) came
    // after, and the next turn must still see it.
    rebase: (current) =>
      current.contextSummary === state.summary && current.summaryWatermark === state.watermark
        ? { ...patch, compactionDirty: current.compactionDirty && !state.dirty }
        : "covered",
  });
  return { won: commit?.status === "written", chat: commit?.chat ?? input.chat };
}
