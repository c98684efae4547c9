import { and, eq, gte } from "drizzle-orm";
import {
  notesIn,
  splitUserNotes,
  summarizesNothing,
  withUserNotes,
} from "@/lib/compaction/user-notes";
import type { Db } from "@/lib/db/client";
import { commitCompactionState } from "@/lib/db/compaction-state";
import { isProgramLimitExceeded } from "@/lib/db/errors";
import {
  activateBranch,
  archiveBranch,
  archiveRows,
  type BranchHead,
  branchAt,
  branchSlotsOf,
  insertBranch,
  isOnlyInHiddenVersion,
  listBranchHeads,
  replaceTail,
  type ShownAnchor,
  shownAnchors,
} from "@/lib/db/queries/branches";
import { bumpHistoryVersion, lockChatRow } from "@/lib/db/queries/chats";
import { summaryEventIdOf } from "@/lib/db/queries/compaction-events";
import {
  findMessage,
  loadHistoryFrom,
  reopenFoldedUnpins,
  seqsOf,
  storedIdsAmong,
} from "@/lib/db/queries/messages";
import { chat as chatTable, type Message, message } from "@/lib/db/schema";
import { AppError, chatDeleted } from "@/lib/errors";

/**
 * Safe edits and regenerations (issue 14): an edit that rewrites a user message, or a
 * regenerate that replaces the reply to one, keeps the version it replaces — that message as
 * it was and everything that followed it — as a branch the chat can switch back to. Both kinds
 * are versions of the same turn, anchored on the user message. Each version keeps the
 * compaction state it had when it was left, so the summary shown and sent always belongs to
 * the version on screen.
 */

/**
 * The ‹ n/m › switch of one turn's versions. `messageId` is the user message they are versions
 * of (what a switch names); `shownOn` is where the switch sits: under the reply when every
 * version asks the same thing (only regenerated), under the user message once it was edited.
 */
export type BranchSwitch = { messageId: string; shownOn: string; position: number; count: number };

type SummaryState = { summary: string | null; watermark: string | null };

/**
 * Called inside an edit's or a regenerate's transaction before it changes anything: the
 * version on screen (the anchor — the user message edited or answered anew — and everything
 * after it, with the chat's summary state) is archived, and a new active version is opened.
 */
export async function keepShownVersion(
  db: Db,
  chatId: string,
  anchor: Message,
  history: readonly Message[],
): Promise<void> {
  const [chat] = await db.select().from(chatTable).where(eq(chatTable.id, chatId));
  if (!chat) return;
  const left = {
    messages: archiveRows(history.filter((m) => m.seq >= anchor.seq)),
    summary: chat.contextSummary,
    watermark: chat.summaryWatermark,
  };
  const versions = await branchSlotsOf(db, chatId, anchor.id);
  const current = versions.find((v) => v.active);
  let last = versions[versions.length - 1]?.position ?? 0;
  await keptWhole(
    current
      ? archiveBranch(db, current.id, left)
      : insertBranch(db, { chatId, anchorId: anchor.id, position: ++last, active: false, ...left }),
  );
  await insertBranch(db, {
    chatId,
    anchorId: anchor.id,
    position: last + 1,
    active: true,
    messages: null,
    summary: null,
    watermark: null,
  });
}

/**
 * A version's messages are one jsonb value in its row, which Postgres keeps under 256 MiB: a
 * larger one (thousands of messages near the length cap) is refused with a clear answer, the
 * chat as it was (the caller's transaction rolls back), not a 500 on every try.
 */
async function keptWhole(write: Promise<void>): Promise<void> {
  try {
    await write;
  } catch (error) {
    if (!isProgramLimitExceeded(error)) throw error;
    throw new AppError(
      "payload_too_large:version",
      "The messages this would move to an earlier version are too large to keep (a version holds at most 256 MB). Nothing was changed.",
      { cause: error },
    );
  }
}

/**
 * Which summary state the chat takes when it shows another version: the target's own when
 * its summary covers part of its messages; the current one when it covers only messages both
 * versions share (or nothing); else the target's, which then covers only shared messages.
 */
export function stateForBranch(input: {
  current: SummaryState;
  target: SummaryState;
  /**
   * Ids of messages before the anchor, the same in every version (at least those of the two
   * watermarks that are).
   */
  sharedIds: ReadonlySet<string>;
  /** Ids of the target version's messages (the anchor and what follows it). */
  targetIds: ReadonlySet<string>;
}): SummaryState | "keep" {
  const { current, target, sharedIds, targetIds } = input;
  if (target.watermark && targetIds.has(target.watermark)) return target;
  if (!current.watermark || sharedIds.has(current.watermark)) return "keep";
  if (!target.watermark || sharedIds.has(target.watermark)) return target;
  return { summary: null, watermark: null };
}

/**
 * The switches to show: one per turn with versions whose user message is in the chat as shown.
 * Reads the versions' heads and, when there are any (most chats have none), their messages as
 * shown and what follows each: never the whole chat.
 */
export async function branchSwitches(db: Db, chatId: string): Promise<BranchSwitch[]> {
  const versions = await listBranchHeads(db, chatId);
  if (versions.length === 0) return [];
  const anchors = await shownAnchors(db, chatId, [...new Set(versions.map((v) => v.anchorId))]);
  return switchesOf(versions, anchors);
}

function switchesOf(
  versions: readonly BranchHead[],
  anchors: ReadonlyMap<string, ShownAnchor>,
): BranchSwitch[] {
  const switches = new Map<string, BranchSwitch & { edited: boolean }>();
  for (const version of versions) {
    const anchor = anchors.get(version.anchorId);
    if (!anchor) continue;
    const entry = switches.get(version.anchorId) ?? {
      messageId: version.anchorId,
      shownOn: version.anchorId,
      position: 0,
      count: 0,
      edited: false,
    };
    entry.count += 1;
    if (version.active) entry.position = version.position;
    // An archived version starts with the anchor as it was then.
    const then = version.anchorPartsThen;
    if (then && JSON.stringify(then) !== JSON.stringify(anchor.parts)) entry.edited = true;
    switches.set(version.anchorId, entry);
  }
  return [...switches.values()]
    .filter((s) => s.count > 1 && s.position > 0)
    .map(({ edited, ...entry }) => {
      // A compaction's entry may sit between the message and its reply (one that committed
      // while the reply was written): the timeline shows no switch on an entry.
      const reply = anchors.get(entry.messageId)?.next;
      return {
        ...entry,
        shownOn: !edited && reply?.role === "assistant" ? reply.id : entry.messageId,
      };
    });
}

/**
 * Shows another version of an edited message, in one transaction: the version on screen is
 * archived with its summary state, the target's messages take its place, the summary state
 * follows (see `stateForBranch`) through the CAS writer, and the history version is bumped so
 * an in-flight compaction of the old version cannot commit.
 */
export async function switchBranch(
  db: Db,
  chatId: string,
  anchorId: string,
  position: number,
): Promise<void> {
  await db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    if (!(await lockChatRow(tx, chatId))) throw chatDeleted();
    // What the switch rewrites (the anchor and what follows it), not the whole chat.
    const anchor = await findMessage(tx, chatId, anchorId);
    if (!anchor) throw new AppError("not_found:message", "That message is not in this chat.");
    const tail = await loadHistoryFrom(tx, chatId, anchor.seq);
    const versions = await branchSlotsOf(tx, chatId, anchorId);
    const slot = versions.find((v) => v.position === position);
    if (!slot) throw new AppError("not_found:branch", "That message has no such version.");
    if (slot.active) return;
    // Only the version shown next is read whole: not every other one the message has.
    const target = await branchAt(tx, chatId, anchorId, position);
    if (!target) throw new AppError("not_found:branch", "That message has no such version.");
    const [chat] = await tx.select().from(chatTable).where(eq(chatTable.id, chatId));
    if (!chat) throw chatDeleted();

    const current = { summary: chat.contextSummary, watermark: chat.summaryWatermark };
    const left = { messages: archiveRows(tail), ...current };
    // Which of the two summaries' watermarks stand before the anchor, shared by every version
    // (read before the tail goes).
    const watermarkSeqs = await seqsOf(
      tx,
      chatId,
      [current.watermark, target.watermark].filter((id) => id !== null),
    );
    const sharedIds = new Set(
      [...watermarkSeqs].filter(([, seq]) => seq < anchor.seq).map(([id]) => id),
    );
    const shown = versions.find((v) => v.active);
    const last = versions[versions.length - 1]?.position ?? 0;
    await keptWhole(
      shown
        ? archiveBranch(tx, shown.id, left)
        : insertBranch(tx, { chatId, anchorId, position: last + 1, active: false, ...left }),
    );

    const restored = target.messages ?? [];
    // By place, not by id: a version's tail may hold more messages than a statement binds values.
    await tx.delete(message).where(and(eq(message.chatId, chatId), gte(message.seq, anchor.seq)));
    const taken = await storedIdsAmong(
      tx,
      restored.map((m) => m.id),
    );
    if (taken.length > 0) {
      throw new AppError("conflict:branch", "That version's messages clash with this chat's.");
    }
    await replaceTail(tx, chatId, anchor.seq, restored);
    await activateBranch(tx, target.id);

    const next = stateForBranch({
      current,
      target: { summary: target.summary, watermark: target.watermark },
      sharedIds,
      targetIds: new Set(restored.map((m) => m.id)),
    });
    if (next !== "keep") {
      // The user's notes are the chat's, not a version's: they stay whichever version shows.
      // As written, blank lines between them too (notesIn keeps none at either end).
      const notes = notesIn(current.summary);
      const summary = withUserNotes(splitUserNotes(next.summary).rest || null, notes);
      const patch = {
        contextSummary: summary,
        // Notes alone cover no message.
        summaryWatermark: summarizesNothing(summary) ? null : next.watermark,
      };
      const outcome = await commitCompactionState(tx, {
        chatId,
        expectedVersion: chat.version,
        patch,
        rebase: () => patch,
      });
      if (outcome?.status !== "written") {
        throw new AppError("conflict:chat", "The chat changed meanwhile. Try again.");
      }
      // The summary taken may predate a fold that told an unpinned message.
      const toldBy = next.summary
        ? await summaryEventIdOf(tx, chatId, { summary: next.summary, watermark: next.watermark })
        : undefined;
      await reopenFoldedUnpins(tx, chatId, toldBy);
    }
    await bumpHistoryVersion(tx, chatId);
  });
}

/**
 * Why an older page's cursor this chat does not show is refused: put aside with a version an
 * edit or a switch elsewhere replaced (409: the page is out of date, reload it), or never a
 * message of this chat (400).
 */
export async function missingCursorError(db: Db, chatId: string, before: string | undefined) {
  if (before !== undefined && (await isOnlyInHiddenVersion(db, chatId, before))) {
    return new AppError(
      "conflict:history",
      "This chat changed in another tab or on another device. Reload it to see it as it is.",
    );
  }
  return new AppError("bad_request:query", "before is not a message of this chat.");
}
