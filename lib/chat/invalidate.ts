import { eq } from "drizzle-orm";
import type { Db } from "@/lib/db/client";
import { commitCompactionState, markCompactionDirty } from "@/lib/db/compaction-state";
import { listSummaryEvents, recordCompactionEvent } from "@/lib/db/queries/compaction-events";
import { reopenFoldedUnpins } from "@/lib/db/queries/messages";
import { type CompactionEvent, chat as chatTable, type Message } from "@/lib/db/schema";
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
  const events = await listSummaryEvents(db, chatId);
  let target: { summary: string; watermark: string | null; seq: number } | null = null;
  for (const event of events) {
    // A summary with no watermark (a handoff's from another chat, or the user's edit of it
    // before the first fold) precedes every message of this one.
    const seq = event.watermarkTo ? seqOf.get(event.watermarkTo) : -1;
    if (seq === undefined || seq >= changedSeq || !event.summary) continue;
    if (!target || seq > target.seq)
      target = { summary: event.summary, watermark: event.watermarkTo, seq };
  }
  // What the user wrote into a summary this rolls back past stays, for them to keep or drop.
  const kept = userLinesRolledPast(events, seqOf, changedSeq, target?.summary ?? "");
  const patch = {
    contextSummary: withUserNotes(target?.summary ?? null, kept),
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
    error: `${
      target
        ? "rolled back to an earlier summary"
        : "summary dropped: the change precedes every summary"
    }${kept.length > 0 ? `; kept ${kept.length} line(s) you wrote` : ""}`,
  });
  metric("compaction.invalidated", { chatId, rolledBackTo: patch.summaryWatermark });
}

/** The heading the lines a user wrote into a summary rolled back past are kept under. */
export const USER_NOTES_HEADING = "## Notes you added";

const lineKey = (line: string) => line.trim().replace(/\s+/g, " ");

/**
 * The lines the user wrote into summaries this rollback passes (their edits whose watermark is at
 * or after the change), oldest edit first: each edit's lines that the summary it replaced lacked,
 * less the headings and what the summary rolled back to holds already.
 */
function userLinesRolledPast(
  events: readonly CompactionEvent[],
  seqOf: ReadonlyMap<string, number>,
  changedSeq: number,
  rolledBackTo: string,
): string[] {
  const present = new Set(rolledBackTo.split("\n").map(lineKey));
  const kept: string[] = [];
  // Newest first: the summary an edit replaced is the next one written before it.
  for (let i = events.length - 1; i >= 0; i--) {
    const edit = events[i];
    if (edit?.reason !== "edited" || !edit.summary) continue;
    const seq = edit.watermarkTo ? seqOf.get(edit.watermarkTo) : -1;
    if (seq === undefined || seq < changedSeq) continue;
    const replaced = new Set((events[i + 1]?.summary ?? "").split("\n").map(lineKey));
    for (const line of edit.summary.split("\n")) {
      const key = lineKey(line);
      if (key === "" || /^#{1,6}\s/.test(key) || replaced.has(key) || present.has(key)) continue;
      present.add(key);
      kept.push(line.trim());
    }
  }
  return kept;
}

/** `summary` with the user's kept lines after it, under their own heading. */
function withUserNotes(summary: string | null, lines: readonly string[]): string | null {
  if (lines.length === 0) return summary;
  const notes = `${USER_NOTES_HEADING}\n${lines.join("\n")}`;
  return summary ? `${summary.trimEnd()}\n\n${notes}` : notes;
}
