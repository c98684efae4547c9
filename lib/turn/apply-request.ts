import { eq } from "drizzle-orm";
import { keepShownVersion } from "@/lib/chat/branches";
import { invalidateFrom } from "@/lib/chat/invalidate";
import type { Db } from "@/lib/db/client";
import { isOnlyInHiddenVersion } from "@/lib/db/queries/branches";
import { bumpHistoryVersion, lockChatRow } from "@/lib/db/queries/chats";
import {
  appendIfNew,
  appendIfNewAndNote,
  findMessage,
  findMessageAnywhere,
  isMessageOfUser,
  type KeyedMessage,
  lastMessage,
  loadHistoryFrom,
  truncateFrom,
} from "@/lib/db/queries/messages";
import { type Chat, type Message, message } from "@/lib/db/schema";
import { AppError, chatDeleted } from "@/lib/errors";
import { type TurnRequest, userMessageRow } from "./request";

/** A manual compaction's timeline entry: not a reply, never a regenerate target. */
function isCompactionEntry(row: Message): boolean {
  return (row.metadata as { compaction?: boolean } | null)?.compaction === true;
}

/**
 * The user's message at the end of the chat, still without a reply: what Retry on a reply
 * that was never stored (stopped before it said anything, or failed) asks to answer again.
 */
async function unansweredMessage(db: Db, chatId: string): Promise<Message | undefined> {
  const last = await lastMessage(db, chatId);
  return last?.role === "user" ? last : undefined;
}

/**
 * A new message from a page that did not show the chat's newest messages (another tab or
 * device went on): answered after them, it would reply to what that page never showed. The
 * page puts the message back in its box and shows the chat as it is.
 */
export const wentOnBeforeSend = () =>
  new AppError(
    "conflict:message",
    "This chat went on in another tab or on another device; its newest messages are shown now. Send your message again if it still fits.",
  );

const wentOn = () =>
  new AppError(
    "conflict:message",
    "This chat went on since this page showed it (in another tab or on another device). Reload it to see where it stands.",
  );

/**
 * An edit or a regenerate the page was told moves the messages after it up to `throughId` (the
 * chat's last message then): refused when the chat has gone on since (another tab's turn), so
 * it never moves messages the person who confirmed it did not know of.
 */
function refuseIfWentOn(history: readonly Message[], throughId: string | undefined): void {
  if (throughId === undefined) return;
  if (history.findLast((m) => !isCompactionEntry(m))?.id !== throughId) throw wentOn();
}

/**
 * What a regenerate naming a message the chat does not show answers: the message left
 * unanswered, when the id is a reply that was never stored (the page's own id for it). An id a
 * hidden version of this chat, or another chat of its owner, holds is a message some page saw:
 * that page is behind (the chat went on in another tab), and nothing else is answered in its
 * place. Another user's message is no message of theirs: answered as an unknown id, so whether
 * it exists does not show.
 */
async function neverStored(
  db: Db,
  chat: Pick<Chat, "id" | "userId">,
  messageId: string,
): Promise<Message | undefined> {
  const [elsewhere, hidden] = await Promise.all([
    isMessageOfUser(db, chat.userId, messageId),
    isOnlyInHiddenVersion(db, chat.id, messageId),
  ]);
  if (elsewhere || hidden) throw wentOn();
  return unansweredMessage(db, chat.id);
}

/**
 * Applies what the browser asked for to the stored history: append a new user
 * message (one statement), or, in one transaction, edit one (dropping what
 * followed it) or drop the reply to regenerate — an edit and a regenerate keep
 * what they drop as an earlier version of the turn. The caller reloads.
 *
 * With `note`, a new message notes the turn on the chat in the statement that
 * stores it, and the chat comes back as it is now with the message as a turn
 * reads it; otherwise (and for every other request) null: the caller notes the
 * turn itself.
 */
export async function applyTurnRequest(
  db: Db,
  chat: Chat,
  request: TurnRequest,
  note?: { modelId?: string },
): Promise<{ chat: Chat; message: KeyedMessage } | null> {
  if (request.trigger === "continue") return null;
  if (request.trigger === "submit-message") {
    const incoming = request.message;
    // A tab still showing another version edits a message only that version holds: stored as
    // new, its id would live in two versions, and showing that version again would fail. Only
    // a chat rewritten before has versions to look in.
    if (chat.historyVersion > 0 && (await isOnlyInHiddenVersion(db, chat.id, incoming.id))) {
      throw new AppError(
        "conflict:message",
        "That message is in a version of this chat that is not shown now. Reload to see the chat as it is.",
      );
    }
    // A new message is one statement. Ids are unique across chats, so when it is not new,
    // the stored one tells an edit from a clash.
    const stored = userMessageRow(incoming);
    if (note) {
      const noted = await appendIfNewAndNote(db, chat.id, stored, note);
      if (noted) return noted;
    } else if (await appendIfNew(db, chat.id, stored)) {
      return null;
    }
    const existing = await findMessageAnywhere(db, incoming.id);
    // Another chat's (or one deleted since the insert saw it): the id is not this chat's to edit.
    if (existing?.chatId !== chat.id) {
      throw new AppError("conflict:message", "That message id is already in use.");
    }
    if (existing.role !== "user") {
      throw new AppError("bad_request:message", "Only your own messages can be edited.");
    }
    await db.transaction(async (txn) => {
      const tx = txn as unknown as Db;
      if (!(await lockChatRow(tx, chat.id))) throw chatDeleted();
      // What the edit rewrites: the message and what followed it, not the chat before it.
      const rewritten = await loadHistoryFrom(tx, chat.id, existing.seq);
      refuseIfWentOn(rewritten, request.throughId);
      // The version the edit replaces stays reachable through the ‹ n/m › switch.
      await keepShownVersion(tx, chat.id, existing, rewritten);
      const summaryStands = await invalidateFrom(tx, chat.id, existing.seq);
      await tx.update(message).set({ parts: incoming.parts }).where(eq(message.id, existing.id));
      await truncateFrom(tx, chat.id, existing.seq + 1, { keepCompactionEntries: summaryStands });
      await bumpHistoryVersion(tx, chat.id);
    });
    return null;
  }

  await db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    if (!(await lockChatRow(tx, chat.id))) throw chatDeleted();
    const named = request.messageId
      ? ((await findMessage(tx, chat.id, request.messageId)) ??
        (await neverStored(tx, chat, request.messageId)))
      : ((await lastMessage(tx, chat.id)) ?? undefined);
    // A fold's entry is no reply. A page that showed it as one (a reply stopped once its turn
    // had folded the chat, shown as a Stopped reply by a page from before such a reply became
    // the fold's entry) asks for the message it follows: answered where the chat stands, the
    // fold in place. Following a reply, it names nothing to answer.
    const before =
      named && isCompactionEntry(named) ? await lastMessage(tx, chat.id, named.seq) : named;
    if (before !== named && before?.role !== "user") {
      throw new AppError(
        "bad_request:message",
        "That is no reply: there is nothing to regenerate.",
      );
    }
    const target = before ?? undefined;
    if (!target) throw new AppError("not_found:message", "There is no such message to regenerate.");
    // A reply is replaced; a user message keeps its place and gets a new reply.
    const from = target.role === "assistant" ? target.seq : target.seq + 1;
    // A compaction's entry may sit between a message and its reply (a background compaction
    // that committed while the reply was written): the message answered is the one before it.
    const answered = await lastMessage(tx, chat.id, from);
    // What the regenerate rewrites, from the message it answers on: not the chat before it.
    const rewritten = await loadHistoryFrom(tx, chat.id, answered?.seq ?? from);
    // Retry names the message a page showed unanswered: answered since, or followed by another
    // message (another tab or device went on), it is not that page's to answer again.
    if (target.role === "user" && rewritten.some((m) => m.seq >= from && !isCompactionEntry(m))) {
      throw wentOn();
    }
    refuseIfWentOn(rewritten, request.throughId);
    // A message whose reply was never stored is answered where the chat stands: a compaction
    // that ran since (Compact now) stays in place, nothing becomes an earlier version.
    if (target.role === "user" && rewritten.every((m) => m.seq < from || isCompactionEntry(m))) {
      return;
    }
    if (answered?.role !== "user") {
      throw new AppError("bad_request:message", "There is no message of yours to answer.");
    }
    // The reply it replaces, and whatever followed, stays reachable through the ‹ n/m › switch.
    if (rewritten.some((m) => m.seq >= from)) {
      await keepShownVersion(tx, chat.id, answered, rewritten);
    }
    // A compaction that ran after the reply (in the background, or Compact now) folded only
    // what came before it: while its summary stands, its entry stays in the timeline.
    const summaryStands = await invalidateFrom(tx, chat.id, from);
    await truncateFrom(tx, chat.id, from, { keepCompactionEntries: summaryStands });
    await bumpHistoryVersion(tx, chat.id);
  });
  return null;
}
