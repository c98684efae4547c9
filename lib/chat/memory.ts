import { generateId } from "ai";
import { and, asc, eq, sql } from "drizzle-orm";
import { carriedSummary, type LedgerEntry, splitSummary } from "@/lib/compaction/ledger";
import { savedPct, type TraceOutput, traceEntry } from "@/lib/compaction/trace";
import {
  lineKey,
  NOTE_ADDED,
  NOTE_REMOVED,
  notesCapacity,
  notesCost,
  noteText,
  splitUserNotes,
  summarizesNothing,
  withUserNotes,
} from "@/lib/compaction/user-notes";
import { isTracePart } from "@/lib/compaction/view";
import { defaultEstimator } from "@/lib/context/tokens";
import type { Db } from "@/lib/db/client";
import { casCompactionState } from "@/lib/db/compaction-state";
import { type ChatListing, createChat, getChat } from "@/lib/db/queries/chats";
import { recordCompactionEvent } from "@/lib/db/queries/compaction-events";
import {
  appendMessageInTransaction,
  insertMessageRows,
  type PinnedMessage,
  pinnedMessages,
} from "@/lib/db/queries/messages";
import { type Chat, chat as chatTable, message } from "@/lib/db/schema";
import { AppError, chatDeleted } from "@/lib/errors";
import { defaultAllowedModelId } from "@/lib/limits/model-access";
import { isPinnedByUser } from "@/lib/message/pins";
import { type FoldUIMessage, rowToUIMessage } from "@/lib/message/ui-message";
import { headOf } from "@/lib/message/unstorable-text";
import { modelBudget } from "./budget";
import { holdLease } from "./lease";
import { SUMMARY_MAX_CHARS, TITLE_MAX_CHARS } from "./schemas";

/**
 * "What the model remembers" (issue 14): the summary a chat's next request carries, its
 * reference ledger, which messages it covers and which are pinned; the user's own edit of
 * the summary; pins; and a handoff that seeds a new chat with the summary.
 */

export type ChatMemory = {
  /** The summary as the model receives it (narrative and ledger), or null. */
  summary: string | null;
  /** The narrative part, without the "Verbatim references" and "Notes you added" sections. */
  narrative: string;
  ledger: LedgerEntry[];
  /** The lines of "Notes you added": the user's own, carried as written through every fold. */
  notes: string[];
  /**
   * How many tokens the notes take, and how many a fold keeps word for word with the chat's
   * model (its summary budget's share for them); null when no model is available to say.
   * Notes past it (the chat moved to a smaller model) are condensed by the next fold.
   */
  notesRoom: NotesRoom | null;
  /** Id of the last message the summary covers; null when it covers none of this chat's. */
  watermark: string | null;
  /** The compaction version the summary belongs to: an edit must name it. */
  version: number;
  pinnedIds: string[];
  /** The pinned messages, in chat order, with the start of each one's text. */
  pins: PinnedMessage[];
};

export type NotesRoom = { used: number; capacity: number };

function memoryOf(chat: Chat, pins: PinnedMessage[], capacity: number | null): ChatMemory {
  const { rest, notes } = splitUserNotes(chat.contextSummary);
  const { narrative, ledger } = splitSummary(rest);
  return {
    summary: chat.contextSummary,
    narrative,
    ledger,
    notes: notes.filter((line) => line.trim() !== ""),
    notesRoom:
      capacity === null
        ? null
        : { used: notes.length > 0 ? notesCost(notes, countText) : 0, capacity },
    watermark: chat.contextSummary ? chat.summaryWatermark : null,
    version: chat.version,
    pinnedIds: pins.map((pin) => pin.id),
    pins,
  };
}

/** Reads only the pinned messages' starts: a long chat's memory costs what a short one's does. */
export async function chatMemory(db: Db, chat: Chat): Promise<ChatMemory> {
  const [pins, capacity] = await Promise.all([
    pinnedMessages(db, chat.id),
    notesCapacityOf(db, chat),
  ]);
  return memoryOf(chat, pins, capacity);
}

const countText = (text: string) => defaultEstimator.countText(text);

/**
 * Tokens of notes a fold keeps word for word in this chat: the share of the summary budget of
 * the model its next turn uses (the chat's, else the default), counted as a fold counts them.
 * Null when no model is available to say (no turn, so no fold, can run either).
 */
async function notesCapacityOf(db: Db, chat: Chat): Promise<number | null> {
  try {
    const modelId = chat.modelId ?? (await defaultAllowedModelId(db));
    return notesCapacity((await modelBudget(db, modelId)).budget.summaryBudget);
  } catch (error) {
    if (error instanceof AppError && error.code === "unavailable:model") return null;
    throw error;
  }
}

/**
 * The user rewrites the summary: written through the CAS writer against the version they
 * edited (a compaction since answers 409 rather than being overwritten), recorded as a
 * compaction event "edited" — a rollback point like any summary — and left in the timeline
 * as a trace entry. The next request carries it.
 */
export async function editSummary(
  db: Db,
  chat: Chat,
  input: { summary: string; version: number; from?: string },
): Promise<{ memory: ChatMemory; message: FoldUIMessage }> {
  // Notes written in the editor are notes like those added one by one: past what a fold keeps
  // word for word, the next fold would hand the oldest to the summarizer. An edit that does not
  // make them take more room passes (a model with a smaller window may have shrunk the room).
  const written = notesCost(splitUserNotes(input.summary).notes, countText);
  const capacity = written > 0 ? await notesCapacityOf(db, chat) : null;
  return writeUserSummary(db, chat, input, "edited by user", (current) => {
    if (!current) {
      throw new AppError("conflict:no_summary", "This chat has no summary to edit yet.");
    }
    if (capacity !== null && written > capacity) {
      const before = notesCost(splitUserNotes(current).notes, countText);
      if (written > before) throw notesFull(capacity, written);
    }
    return input.summary;
  });
}

/** A note's line in the summary: a bullet, as the notes section lists them. */
const noteLine = (note: string) => (/^[-*]\s/.test(note) ? note : `- ${note}`);
const noteKey = (line: string) => lineKey(noteText(line));

/**
 * The user adds a note to what the model remembers, or takes one away: a line of the summary's
 * "Notes you added" section (lib/compaction/user-notes.ts), which every fold carries as written.
 * A chat with nothing summarized yet gets a summary of its notes alone. Written like an edit of
 * the summary (editSummary): against the version the user saw, as an "edited" event.
 */
export async function changeNote(
  db: Db,
  chat: Chat,
  input: { note: string; version: number; from?: string; remove?: boolean },
): Promise<{ memory: ChatMemory; message: FoldUIMessage }> {
  const key = noteKey(input.note);
  const label = `${input.remove ? NOTE_REMOVED : NOTE_ADDED}: ${headOf(key, 80)}`;
  // Taking a note away needs no room; adding one may not push older notes out of it.
  const capacity = input.remove ? null : await notesCapacityOf(db, chat);
  return writeUserSummary(db, chat, input, label, (current) => {
    const { rest, notes } = splitUserNotes(current);
    const present = notes.some((line) => noteKey(line) === key);
    if (!input.remove) {
      if (present) throw new AppError("conflict:note", "The model already keeps this note.");
      const line = noteLine(input.note);
      const cost = notesCost([...notes, line], countText);
      if (capacity !== null && cost > capacity) throw notesFull(capacity, cost);
      const added = withUserNotes(current, [line]) ?? "";
      // Past the summary's own limit it could no longer be saved as it is, even unchanged.
      if (added.length > SUMMARY_MAX_CHARS) {
        throw new AppError(
          "conflict:summary_full",
          `What the model remembers is at its limit of ${SUMMARY_MAX_CHARS.toLocaleString("en-US")} characters. Take a note away or shorten the summary first.`,
        );
      }
      return added;
    }
    if (!present) {
      throw new AppError("not_found:note", "That note is not in the summary any more.");
    }
    const left = notes.filter((line) => noteKey(line) !== key);
    return withUserNotes(rest, left.some((line) => line.trim()) ? left : []) || null;
  });
}

/**
 * A note that would take the notes past what a fold keeps word for word: the summarizer would
 * condense the oldest at the next fold, so the promise made for each note would not hold.
 */
const notesFull = (capacity: number, cost: number) =>
  new AppError(
    "conflict:notes_full",
    `With this chat's model the notes are kept word for word up to about ${capacity.toLocaleString("en-US")} tokens; with this one they would take ${cost.toLocaleString("en-US")}. Shorten it or take a note away first.`,
  );

/**
 * Writes the summary `next` makes of the current one, as the user's: under the chat's lease,
 * through the CAS writer, with its "edited" event and its trace entry. Refused (409) when the
 * chat's version moved on since the user's `version`, unless the summary is still `from`, the
 * one they began from: the move was not of the summary (a turn set or cleared the chat's
 * compaction flag), and the write goes against the version as it is now.
 */
async function writeUserSummary(
  db: Db,
  chat: Chat,
  { version: seen, from }: { version: number; from?: string },
  note: string,
  next: (current: string | null) => string | null,
): Promise<{ memory: ChatMemory; message: FoldUIMessage }> {
  const lease = await holdLease(
    db,
    chat.id,
    "A reply is streaming in this chat. Change what the model remembers after it finishes.",
  );
  try {
    const started = Date.now();
    const fresh = await getChat(db, chat.id);
    if (!fresh) throw chatDeleted();
    const unchanged = from !== undefined && from === (fresh.contextSummary ?? "");
    if (fresh.version !== seen && !unchanged) throw staleSummary();
    const version = fresh.version;
    const summary = next(fresh.contextSummary);
    const before = defaultEstimator.countText(fresh.contextSummary ?? "");
    const after = defaultEstimator.countText(summary ?? "");
    const trace: TraceOutput = {
      outcome: "summarized",
      reason: "edited",
      tokensBefore: before,
      tokensAfter: after,
      savedPct: savedPct(before, after),
      messagesSummarized: 0,
      summarizerModel: null,
      durationMs: Date.now() - started,
      summary: summary ?? "",
      note,
    };
    const entry = traceEntry(
      trace,
      { reason: trace.reason, tokensBefore: trace.tokensBefore, messages: 0, startedAt: started },
      { messageId: generateId(), toolCallId: `edit-${generateId()}` },
    );
    // The summary, its event and its trace entry together: the event is the rollback point an
    // edit of an earlier message returns to, so a summary without it would be lost to the next
    // rollback; and a summary stored without its entry would answer the user's retry with a
    // 409 (the version moved on) for an edit that reported failing.
    const { written, stored } = await db.transaction(async (txn) => {
      const tx = txn as unknown as Db;
      // The entry first: every append takes its message's place before the chat row.
      const stored = await appendMessageInTransaction(tx, chat.id, entry);
      const cas = await casCompactionState(tx, chat.id, version, {
        contextSummary: summary,
        // A summary of notes alone (or none) covers no message: every one is sent as written.
        ...(summarizesNothing(summary) ? { summaryWatermark: null } : {}),
      });
      if (!cas?.won) throw staleSummary();
      await recordCompactionEvent(tx, {
        chatId: chat.id,
        reason: "edited",
        outcome: "summarized",
        tokensBefore: before,
        tokensAfter: after,
        messagesSummarized: 0,
        watermarkFrom: cas.chat.summaryWatermark,
        watermarkTo: cas.chat.summaryWatermark,
        summary,
        latencyMs: Date.now() - started,
        error: note,
      });
      return { written: cas, stored };
    });
    return { memory: await chatMemory(db, written.chat), message: rowToUIMessage(stored) };
  } finally {
    await lease.release();
  }
}

const staleSummary = () =>
  new AppError(
    "conflict:summary",
    "The summary changed since you opened it (a compaction ran). Reload it and edit again.",
  );

/**
 * Pins or unpins one message; a pinned message is never folded into the summary. No summary
 * tells a message that was pinned when it was written, so an unpinned one stays verbatim
 * (`foldPending`) until a compaction folds it: unpinning never drops it from what the model
 * reads.
 */
export async function setPinned(
  db: Db,
  chatId: string,
  messageId: string,
  pinned: boolean,
): Promise<void> {
  await db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    // After any edit, regenerate or version switch under way (they hold the chat's row while
    // they archive and replace its messages): a pin committed between their read and their
    // delete would be archived as unpinned, and its 200 a lie. Pins do not wait on each other.
    await tx
      .select({ id: chatTable.id })
      .from(chatTable)
      .where(eq(chatTable.id, chatId))
      .for("share");
    await pinInTransaction(tx, chatId, messageId, pinned);
  });
}

async function pinInTransaction(
  db: Db,
  chatId: string,
  messageId: string,
  pinned: boolean,
): Promise<void> {
  const [row] = await db
    .select({ metadata: message.metadata })
    .from(message)
    .where(and(eq(message.chatId, chatId), eq(message.id, messageId)));
  if (!row) throw missingMessage();
  if ((row.metadata as { compaction?: boolean } | null)?.compaction === true) {
    throw new AppError("bad_request:message", "A compaction entry cannot be pinned.");
  }
  const updated = await db
    .update(message)
    .set({
      metadata: pinned
        ? sql`(coalesce(${message.metadata}, '{}'::jsonb) - 'foldPending' - 'unpinned' - 'settledAt') || '{"pinned": true}'::jsonb`
        : sql`case when ${message.metadata} ->> 'pinned' = 'true'
            then ${message.metadata} || '{"foldPending": true}'::jsonb
            else ${message.metadata} end`,
    })
    .where(and(eq(message.chatId, chatId), eq(message.id, messageId)))
    .returning({ id: message.id });
  // Gone since it was read (an edit, a regenerate or a version switch took it away).
  if (updated.length === 0) throw missingMessage();
}

const missingMessage = () =>
  new AppError("not_found:message", "There is no such message in this chat.");

/**
 * What no summary holds comes along to a continued chat as messages: the ones the user pinned
 * (still pinned), the ones unpinned that no summary has told yet, and the latest ones, after
 * the summary's watermark (both as plain messages, folded in the new chat's own time).
 * Copies, with new ids and none of the source's stats; compaction entries stay behind, and so
 * do the traces of folds inside replies (they ran in the source chat, not in the new one).
 */
async function carryUnsummarized(
  tx: Db,
  sourceId: string,
  watermark: string | null,
  chatId: string,
): Promise<void> {
  const watermarkSeq = watermark
    ? sql`(select m.seq from ${message} m where m.chat_id = ${sourceId} and m.id = ${watermark})`
    : sql`-1`;
  const kept = await tx
    .select({ role: message.role, parts: message.parts, metadata: message.metadata })
    .from(message)
    .where(
      and(
        eq(message.chatId, sourceId),
        sql`(${message.metadata} ->> 'compaction') is distinct from 'true'`,
        sql`(${message.metadata} ->> 'pinned' = 'true' or ${message.seq} > coalesce(${watermarkSeq}, -1))`,
      ),
    )
    .orderBy(asc(message.seq));
  const copies = kept
    .map((row) => ({
      ...row,
      parts: (row.parts as FoldUIMessage["parts"]).filter((part) => !isTracePart(part)),
    }))
    .filter((row) => row.parts.length > 0);
  await insertMessageRows(
    tx,
    copies.map((row, seq) => ({
      id: generateId(),
      chatId,
      seq,
      role: row.role,
      parts: row.parts,
      metadata: isPinnedByUser(row.metadata ?? undefined) ? { pinned: true } : null,
    })),
  );
}

/**
 * A handoff's title, within the title limit: marked at its start, which the chat list shows
 * when it cuts a long title short (a mark at the end left two entries reading alike).
 */
function continuedTitle(title: string): string {
  const mark = "Continued: ";
  return `${mark}${headOf(title, TITLE_MAX_CHARS - mark.length)}`;
}

/**
 * Continue in a new chat: a new chat, same model, whose context begins with this chat's
 * summary and ledger, followed by what the summary does not hold (carryUnsummarized): the
 * pinned messages and the latest ones. The summary is seeded through the CAS writer with no
 * watermark (it covers none of the new chat's messages, so it precedes them all) and recorded
 * as a "handoff" event, the new chat's first rollback point.
 */
export async function continueInNewChat(
  db: Db,
  userId: string,
  source: Chat,
): Promise<ChatListing> {
  // Not while a reply streams: the new chat would take its question and never its answer.
  const lease = await holdLease(
    db,
    source.id,
    "A reply is streaming in this chat. Continue in a new chat once it finishes.",
  );
  try {
    // As the chat is now: a turn that ended meanwhile may have changed its model or title.
    return await handOff(db, userId, (await getChat(db, source.id)) ?? source);
  } finally {
    await lease.release();
  }
}

async function handOff(db: Db, userId: string, source: Chat): Promise<ChatListing> {
  return db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    // The summary and the pinned messages as of one moment: a fold cannot commit (and settle
    // what it told) between reading the one and the other.
    const [current] = await tx
      .select({ summary: chatTable.contextSummary, watermark: chatTable.summaryWatermark })
      .from(chatTable)
      .where(eq(chatTable.id, source.id))
      .for("share");
    // Deleted since the route found it (the delete does not wait for this chat's lease).
    if (!current) throw chatDeleted();
    const summary = current.summary;
    // The user's notes alone summarize nothing: there is nothing to start from.
    if (!summary || summarizesNothing(summary)) {
      throw new AppError(
        "conflict:no_summary",
        "Nothing is summarized yet. Compact this chat first, then continue in a new one.",
      );
    }
    const created = await createChat(tx, {
      userId,
      title: continuedTitle(source.title),
      modelId: source.modelId,
    });
    const carried = carriedSummary(summary);
    const seeded = await casCompactionState(tx, created.id, 0, { contextSummary: carried });
    if (!seeded?.won) throw new Error("a new chat's first compaction write lost its CAS");
    await carryUnsummarized(tx, source.id, current.watermark, created.id);
    await recordCompactionEvent(tx, {
      chatId: created.id,
      reason: "handoff",
      outcome: "summarized",
      messagesSummarized: 0,
      watermarkFrom: null,
      watermarkTo: null,
      summary: carried,
      error: `continued from "${source.title}"`,
    });
    return created;
  });
}
