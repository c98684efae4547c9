import { eq } from "drizzle-orm";
import type { Db } from "@/lib/db/client";
import { commitCompactionState, markCompactionDirty } from "@/lib/db/compaction-state";
import { listSummaryEvents, recordCompactionEvent } from "@/lib/db/queries/compaction-events";
import { reopenFoldedUnpins } from "@/lib/db/queries/messages";
import { chat as chatTable, type Message } from "@/lib/db/schema";
import { metric } from "@/lib/log";

/**
 * Invalidation (DESIGN §8): a change at or before the watermark makes the
 * summary stale. Roll back to the newest summary whose watermark still
 * precedes the change — its event holds that state — or to no summary, and
 * mark the chat dirty so the next turn re-summarizes only what is needed.
 */
export async function invalidateFrom(
  db: Db,
  chatId: string,
  changedSeq: number,
  /** The history as it was before the change. */
  rows: readonly Message[],
): Promise<void> {
  const [chat] = await db.select().from(chatTable).where(eq(chatTable.id, chatId));
  if (!chat?.summaryWatermark) return;
  const seqOf = new Map(rows.map((r) => [r.id, r.seq]));
  const watermarkSeq = seqOf.get(chat.summaryWatermark);
  if (watermarkSeq !== undefined && watermarkSeq < changedSeq) return;

  // Newest first; the best rollback point is the furthest watermark still before the change.
  let target: { summary: string; watermark: string | null; seq: number } | null = null;
  for (const event of await listSummaryEvents(db, chatId)) {
    // A summary with no watermark (a handoff's from another chat, or the user's edit of it
    // before the first fold) precedes every message of this one.
    const seq = event.watermarkTo ? seqOf.get(event.watermarkTo) : -1;
    if (seq === undefined || seq >= changedSeq || !event.summary) continue;
    if (!target || seq > target.seq)
      target = { summary: event.summary, watermark: event.watermarkTo, seq };
  }
  const patch = {
    contextSummary: target?.summary ?? null,
    summaryWatermark: target?.watermark ?? null,
    compactionDirty: true,
  };
  const outcome = await commitCompactionState(db, {
    chatId,
    expectedVersion: chat.version,
    patch,
    rebase: () => patch,
  });
  // Whatever else happened, the chat must not keep trusting the stale summary silently.
  if (outcome?.status !== "written") await markCompactionDirty(db, chatId);
  // The summary rolled back to may predate a fold that told an unpinned message.
  await reopenFoldedUnpins(db, chatId);
  await recordCompactionEvent(db, {
    chatId,
    reason: "invalidated",
    outcome: outcome?.status === "written" ? "skipped" : "conflict",
    watermarkFrom: chat.summaryWatermark,
    watermarkTo: patch.summaryWatermark,
    summary: patch.contextSummary,
    messagesSummarized: 0,
    error: target
      ? "rolled back to an earlier summary"
      : "summary dropped: the change precedes every summary",
  });
  metric("compaction.invalidated", { chatId, rolledBackTo: patch.summaryWatermark });
}
