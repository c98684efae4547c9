import { eq } from "drizzle-orm";
import {
  isHeading,
  lineKey,
  NOTE_ADDED,
  NOTE_REMOVED,
  notesIn,
  splitUserNotes,
  withUserNotes,
} from "@/lib/compaction/user-notes";
import type { Db } from "@/lib/db/client";
import { commitCompactionState, markCompactionDirty } from "@/lib/db/compaction-state";
import {
  listCompactionEvents,
  listSummaryEvents,
  recordCompactionEvent,
} from "@/lib/db/queries/compaction-events";
import { reopenFoldedUnpins, seqsOf } from "@/lib/db/queries/messages";
import { type CompactionEvent, chat as chatTable } from "@/lib/db/schema";
import { metric } from "@/lib/log";

/**
 * Invalidation (DESIGN §8): a change at or before the watermark makes the
 * summary stale. Roll back to the newest summary whose watermark still
 * precedes the change — its event holds that state — or to no summary, and
 * mark the chat dirty so the next turn re-summarizes only what is needed.
 *
 * Whether the summary stands: false when it was rolled back or dropped.
 */
export async function invalidateFrom(db: Db, chatId: string, changedSeq: number): Promise<boolean> {
  const [chat] = await db.select().from(chatTable).where(eq(chatTable.id, chatId));
  if (!chat?.summaryWatermark) return true;
  // Where the watermarks stand, read for the ones asked about: not the whole chat (an edit or a
  // regenerate after the watermark, the common case, reads one).
  const watermarkSeq = (await seqsOf(db, chatId, [chat.summaryWatermark])).get(
    chat.summaryWatermark,
  );
  if (watermarkSeq !== undefined && watermarkSeq < changedSeq) return true;

  // Newest first; the best rollback point is the furthest watermark still before the change.
  const [events, all] = await Promise.all([
    listSummaryEvents(db, chatId),
    listCompactionEvents(db, chatId),
  ]);
  const seqOf = await seqsOf(
    db,
    chatId,
    events.flatMap((event) => (event.watermarkTo ? [event.watermarkTo] : [])),
  );
  let target: { summary: string; watermark: string | null; seq: number; eventId: string } | null =
    null;
  for (const event of events) {
    const seq = watermarkSeqOf(event, seqOf);
    if (seq === undefined || seq >= changedSeq || !event.summary) continue;
    if (!target || seq > target.seq)
      target = { summary: event.summary, watermark: event.watermarkTo, seq, eventId: event.id };
  }
  // The user's notes are as they are now, not as the summary rolled back to had them (a note
  // taken away since stays away); what else they wrote into a summary this rolls back past
  // stays beside them, for them to keep or drop.
  const restored = splitUserNotes(target?.summary ?? null).rest || null;
  const kept = userLinesRolledPast(
    events.filter((event) => isRolledPast(event, seqOf, changedSeq)),
    // Who wrote a line first is read from every summary the chat had, a version's since switched
    // away from too (its watermark is gone, so it is no rollback point).
    all.filter(
      (event) =>
        event.reason !== "invalidated" &&
        event.summary &&
        (event.outcome === "summarized" || event.outcome === "fallback"),
    ),
    all.filter((event) => event.reason === "invalidated"),
    chat.contextSummary,
    restored ?? "",
  );
  const patch = {
    contextSummary: withUserNotes(restored, kept),
    // Notes alone cover no message.
    summaryWatermark: restored ? (target?.watermark ?? null) : null,
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
  await reopenFoldedUnpins(db, chatId, restored ? target?.eventId : undefined);
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
  return false;
}

/**
 * Where a summary event's watermark stands in the history; -1 for a summary with no watermark (a
 * handoff's from another chat, or the user's edit of it before the first fold), which precedes
 * every message of this one; undefined when its watermark is no longer in the history.
 */
function watermarkSeqOf(
  event: CompactionEvent,
  seqOf: ReadonlyMap<string, number>,
): number | undefined {
  return event.watermarkTo ? seqOf.get(event.watermarkTo) : -1;
}

/** A summary event whose watermark is at or after the change: the rollback goes past it. */
function isRolledPast(
  event: CompactionEvent,
  seqOf: ReadonlyMap<string, number>,
  changedSeq: number,
): boolean {
  const seq = watermarkSeqOf(event, seqOf);
  return seq !== undefined && seq >= changedSeq;
}

/**
 * The user's lines the summary after this rollback holds as "Notes you added": the notes of the
 * summary it replaces, as they are now, and the lines of the newest edit of the summary's text it
 * goes past, less what the summary it rolls back to holds already. An edit's line is the user's
 * when the oldest summary that holds it is one of their edits or a rollback's notes, or when none
 * does: a line Fold wrote first (a summary the user edited, a digest's line) is not, and a line
 * the user deleted in a later edit is in none of what is looked at.
 */
function userLinesRolledPast(
  rolledPast: readonly CompactionEvent[],
  events: readonly CompactionEvent[],
  /** Earlier rollbacks: the notes each kept are the user's from then on. */
  rollbacks: readonly CompactionEvent[],
  replaced: string | null,
  restored: string,
): string[] {
  const rollbackNotes = rollbacks.map((event) => ({
    at: event.createdAt,
    byUser: true,
    lines: notesIn(event.summary),
  }));
  // Who wrote each line first: Fold (a summary or digest), or the user (an edit, a rollback's notes).
  const firstByUser = firstWriters([
    ...events.map((event) => ({
      at: event.createdAt,
      byUser: event.reason === "edited",
      lines: (event.summary ?? "").split("\n"),
    })),
    ...rollbackNotes,
  ]);
  // Who put each line under the notes heading first: the user (an edit, a handoff of their
  // notes, a rollback) or, before folds carried the notes past the summarizer, a digest that
  // copied the heading and went on writing under it. Lines Fold wrote elsewhere do not count.
  const notesByUser = firstWriters([
    ...events.map((event) => ({
      at: event.createdAt,
      byUser: event.reason === "edited" || event.reason === "handoff",
      lines: notesIn(event.summary),
    })),
    ...rollbackNotes,
  ]);
  const kept: string[] = [];
  const present = new Set<string>();
  // The notes as they are now, each once, whatever the summary rolled back to says.
  for (const line of notesIn(replaced)) {
    const key = lineKey(line);
    if (key === "" || present.has(key) || notesByUser.get(key) === false) continue;
    present.add(key);
    kept.push(line.trim());
  }
  for (const line of restored.split("\n")) present.add(lineKey(line));
  // The newest edit of the summary's text (one that only added or took away a note changed
  // nothing else), less its notes: those the user has now are above, and one taken away since
  // stays away.
  const edit = rolledPast.find(
    (event) => event.reason === "edited" && event.summary && !isNoteChange(event),
  );
  for (const line of splitUserNotes(edit?.summary ?? null).rest?.split("\n") ?? []) {
    const key = lineKey(line);
    if (key === "" || isHeading(key) || present.has(key) || firstByUser.get(key) === false)
      continue;
    present.add(key);
    kept.push(line.trim());
  }
  return kept;
}

/** For each line (by lineKey), whether the oldest holder that has it is the user's. */
function firstWriters(
  holders: readonly { at: Date; byUser: boolean; lines: readonly string[] }[],
): Map<string, boolean> {
  const firstByUser = new Map<string, boolean>();
  // Newest first: the oldest holder of a line is the last one seen.
  const newestFirst = [...holders].sort((a, b) => b.at.getTime() - a.at.getTime());
  for (const { byUser, lines } of newestFirst) {
    for (const line of lines) firstByUser.set(lineKey(line), byUser);
  }
  return firstByUser;
}

/** An edit that only added or took away one of the user's notes (lib/chat/memory.ts). */
function isNoteChange(event: CompactionEvent): boolean {
  return [NOTE_ADDED, NOTE_REMOVED].some((label) => event.error?.startsWith(`${label}:`));
}
