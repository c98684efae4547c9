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
  listSummaryEventHeads,
  recordCompactionEvent,
  type SummaryEventHead,
  summariesOf,
} from "@/lib/db/queries/compaction-events";
import { reopenFoldedUnpins, seqsOf } from "@/lib/db/queries/messages";
import { chat as chatTable } from "@/lib/db/schema";
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

  // Newest first, without their text; the best rollback point is the furthest watermark still
  // before the change.
  const heads = await listSummaryEventHeads(db, chatId);
  const events = heads.filter(isRollbackPoint);
  const seqOf = await seqsOf(
    db,
    chatId,
    events.flatMap((event) => (event.watermarkTo ? [event.watermarkTo] : [])),
  );
  let target: { watermark: string | null; seq: number; eventId: string } | null = null;
  for (const event of events) {
    const seq = watermarkSeqOf(event, seqOf);
    if (seq === undefined || seq >= changedSeq || !event.hasSummary) continue;
    if (!target || seq > target.seq)
      target = { watermark: event.watermarkTo, seq, eventId: event.id };
  }
  // The newest edit of the summary's text this goes past (one that only added or took away a
  // note changed nothing else).
  const edit = events.find(
    (event) =>
      isRolledPast(event, seqOf, changedSeq) &&
      event.reason === "edited" &&
      event.hasSummary &&
      !isNoteChange(event),
  );
  const texts = await summariesOf(
    db,
    chatId,
    [target?.eventId, edit?.id].filter((id) => id !== undefined),
  );
  // The user's notes are as they are now, not as the summary rolled back to had them (a note
  // taken away since stays away); what else they wrote into a summary this rolls back past
  // stays beside them, for them to keep or drop.
  const restored = splitUserNotes(target ? (texts.get(target.eventId) ?? null) : null).rest || null;
  const kept = await userLinesRolledPast(db, chatId, {
    // Who wrote a line first is read from every summary the chat had, a version's since switched
    // away from too (its watermark is gone, so it is no rollback point).
    holders: heads.filter((event) => event.reason === "invalidated" || event.hasSummary),
    edit: edit ? (texts.get(edit.id) ?? null) : null,
    replaced: chat.contextSummary,
    restored: restored ?? "",
  });
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

/** A summary that can be rolled back to: its watermark message still says what it summarized. */
function isRollbackPoint(event: SummaryEventHead): boolean {
  return (event.outcome === "summarized" || event.outcome === "fallback") && event.current;
}

/**
 * Where a summary event's watermark stands in the history; -1 for a summary with no watermark (a
 * handoff's from another chat, or the user's edit of it before the first fold), which precedes
 * every message of this one; undefined when its watermark is no longer in the history.
 */
function watermarkSeqOf(
  event: SummaryEventHead,
  seqOf: ReadonlyMap<string, number>,
): number | undefined {
  return event.watermarkTo ? seqOf.get(event.watermarkTo) : -1;
}

/** A summary event whose watermark is at or after the change: the rollback goes past it. */
function isRolledPast(
  event: SummaryEventHead,
  seqOf: ReadonlyMap<string, number>,
  changedSeq: number,
): boolean {
  const seq = watermarkSeqOf(event, seqOf);
  return seq !== undefined && seq >= changedSeq;
}

/** Summaries read per statement while looking for who wrote a line first. */
const HOLDERS_PER_READ = 200;

/**
 * The user's lines the summary after this rollback holds as "Notes you added": the notes of the
 * summary it replaces, as they are now, and the lines of the newest edit of the summary's text it
 * goes past (`edit`), less what the summary it rolls back to holds already. An edit's line is the
 * user's when the oldest summary that holds it is one of their edits or a rollback's notes, or
 * when none does: a line Fold wrote first (a summary the user edited, a digest's line) is not,
 * and a line the user deleted in a later edit is in none of what is looked at.
 */
async function userLinesRolledPast(
  db: Db,
  chatId: string,
  input: {
    /** Events that wrote a summary, and earlier rollbacks (their notes are the user's from then on). */
    holders: readonly SummaryEventHead[];
    edit: string | null;
    replaced: string | null;
    restored: string;
  },
): Promise<string[]> {
  const notes = notesIn(input.replaced);
  const editLines = splitUserNotes(input.edit).rest?.split("\n") ?? [];
  const { firstByUser, notesByUser } = await firstWriters(db, chatId, input.holders, {
    lines: new Set(editLines.map(lineKey).filter((key) => key !== "" && !isHeading(key))),
    notes: new Set(notes.map(lineKey).filter((key) => key !== "")),
  });
  const kept: string[] = [];
  const present = new Set<string>();
  // The notes as they are now, each once, whatever the summary rolled back to says.
  for (const line of notes) {
    const key = lineKey(line);
    if (key === "" || present.has(key) || notesByUser.get(key) === false) continue;
    present.add(key);
    kept.push(line.trim());
  }
  for (const line of input.restored.split("\n")) present.add(lineKey(line));
  // The edit's lines, less its notes: those the user has now are above, and one taken away
  // since stays away.
  for (const line of editLines) {
    const key = lineKey(line);
    if (key === "" || isHeading(key) || present.has(key) || firstByUser.get(key) === false)
      continue;
    present.add(key);
    kept.push(line.trim());
  }
  return kept;
}

/**
 * For each line asked about (by lineKey), whether the oldest holder that has it is the user's:
 * `firstByUser` over whole summaries — Fold's (a summary or digest) or the user's (an edit, a
 * rollback's notes) —, `notesByUser` over what sits under the notes heading — the user's (an
 * edit, a handoff of their notes, a rollback) or, before folds carried the notes past the
 * summarizer, a digest that copied the heading and went on writing under it. Holders are read
 * oldest first, a few hundred at a time, until every line asked about has its first writer.
 */
async function firstWriters(
  db: Db,
  chatId: string,
  holders: readonly SummaryEventHead[],
  asked: { lines: ReadonlySet<string>; notes: ReadonlySet<string> },
): Promise<{ firstByUser: Map<string, boolean>; notesByUser: Map<string, boolean> }> {
  const firstByUser = new Map<string, boolean>();
  const notesByUser = new Map<string, boolean>();
  const settled = () =>
    firstByUser.size === asked.lines.size && notesByUser.size === asked.notes.size;
  // Oldest first; at the same moment a rollback before a summary.
  const oldestFirst = [...holders].sort(
    (a, b) =>
      a.createdAt.getTime() - b.createdAt.getTime() ||
      Number(b.reason === "invalidated") - Number(a.reason === "invalidated"),
  );
  for (let at = 0; at < oldestFirst.length && !settled(); at += HOLDERS_PER_READ) {
    const batch = oldestFirst.slice(at, at + HOLDERS_PER_READ);
    const texts = await summariesOf(
      db,
      chatId,
      batch.map((holder) => holder.id),
    );
    for (const holder of batch) {
      const text = texts.get(holder.id) ?? null;
      const rollback = holder.reason === "invalidated";
      const notes = notesIn(text);
      claimFirst(
        firstByUser,
        asked.lines,
        rollback ? notes : (text ?? "").split("\n"),
        rollback || holder.reason === "edited",
      );
      claimFirst(
        notesByUser,
        asked.notes,
        notes,
        rollback || holder.reason === "edited" || holder.reason === "handoff",
      );
    }
  }
  return { firstByUser, notesByUser };
}

/** Marks each asked line of `lines` not yet seen as written by this holder. */
function claimFirst(
  into: Map<string, boolean>,
  asked: ReadonlySet<string>,
  lines: readonly string[],
  byUser: boolean,
): void {
  for (const line of lines) {
    const key = lineKey(line);
    if (asked.has(key) && !into.has(key)) into.set(key, byUser);
  }
}

/** An edit that only added or took away one of the user's notes (lib/chat/memory.ts). */
function isNoteChange(event: SummaryEventHead): boolean {
  return [NOTE_ADDED, NOTE_REMOVED].some((label) => event.error?.startsWith(`${label}:`));
}
