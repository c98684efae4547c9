import { titleFromMessage } from "@/lib/chat/title";
import type { Db } from "@/lib/db/client";
import { isDeletedChatReference } from "@/lib/db/errors";
import { noteTurnOnChat } from "@/lib/db/queries/chats";
import type { TurnStart } from "@/lib/db/queries/leases";
import {
  appendIfNewAndNote,
  firstUserMessage,
  type KeyedMessage,
  loadKeyedHistory,
  loadTurnHistory,
  newMessageWentOnPast,
  positionsOf,
} from "@/lib/db/queries/messages";
import type { Chat } from "@/lib/db/schema";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { env } from "@/lib/env";
import { AppError, chatDeleted, databaseUnavailable } from "@/lib/errors";
import { type FoldUIMessage, messageText, rowToUIMessage } from "@/lib/message/ui-message";
import { applyTurnRequest, wentOnBeforeSend } from "./apply-request";
import { type IncomingUserMessage, type TurnRequest, userMessageRow } from "./request";

export type PreparedTurn = {
  chat: Chat;
  /**
   * The new message's write, when it runs beside the model call (a turn read its history with
   * its lease): settles once the message is stored, or fails; nothing the turn shows or
   * stores may come before it.
   */
  stored?: Promise<void>;
  /** The stored messages the turn needs: from the watermark on (see loadTurnHistory). */
  history: FoldUIMessage[];
  /** Each stored message's number in the chat (`positionsOf`), which references cite. */
  positions: ReadonlyMap<string, number>;
};

/**
 * Steps 2–3 of a turn: apply the request to the stored history, note the turn
 * on the chat (its model, a first title, its place in the list) and load what
 * the turn sends — the messages from the watermark on, not the whole chat.
 */
export async function prepareTurn(
  db: Db,
  chat: Chat,
  request: TurnRequest,
  modelId: string,
  /** What the statement that took the chat's lease read for a new message (TurnStart). */
  start?: TurnStart,
): Promise<PreparedTurn> {
  // A new message names the last message its page showed: one the chat has gone past is
  // refused before anything is written (an edit's own check is applyTurnRequest's).
  if (
    request.trigger === "submit-message" &&
    request.throughId !== undefined &&
    (start
      ? start.isNew && start.wentOn
      : await newMessageWentOnPast(db, chat.id, request.message.id, request.throughId))
  ) {
    throw wentOnBeforeSend();
  }
  const modelChange = chat.modelId !== modelId ? modelId : undefined;
  // A titled chat is noted in the statement that stores a new message; the first turns,
  // which title the chat from its first message, note it after (as every other request).
  const titled = chat.titled;
  if (
    titled &&
    request.trigger === "submit-message" &&
    start?.isNew &&
    start.current &&
    covers(start.rows, chat)
  ) {
    // The common turn, with its history read already: the message is stored beside the model
    // call rather than before it, one round trip less before the first token.
    return {
      chat: { ...chat, modelId },
      history: [...start.rows.map(rowToUIMessage), rowToUIMessage(userMessageRow(request.message))],
      positions: positionsOf(start.rows),
      stored: storedBeside(storeNew(db, chat, request.message, modelChange)),
    };
  }
  if (titled && request.trigger === "submit-message") {
    // The common turn, a new message: its history loads beside the statement that stores it,
    // one round trip less before the first token. The load may see the message or not
    // (another connection); either way the rows hold it once.
    const [written, read] = await Promise.allSettled([
      applyTurnRequest(db, chat, request, { modelId: modelChange }),
      loadForTurn(db, chat),
    ]);
    if (written.status === "rejected") throw written.reason;
    if (read.status === "rejected") throw new AppliedRequestError(read.reason);
    const [appended, rows] = [written.value, read.value];
    if (appended) {
      const withMessage = rows.some((row) => row.id === appended.message.id)
        ? rows
        : [...rows, appended.message];
      return loaded(db, appended.chat, withMessage);
    }
    // An edit: the history it rewrote is loaded below.
  } else {
    await applyTurnRequest(db, chat, request);
  }
  return afterApplied(() => noteAndLoad(db, chat, modelChange, titled));
}

/**
 * The request's change to the stored history is in (a new message, an edit, a regenerate's
 * versions), but what the turn noted or read after it failed: the turn cannot be answered as if
 * it never came, since sending it again would apply the change twice (a second version of an
 * edit, a regenerate refused as behind).
 */
export class AppliedRequestError extends Error {
  constructor(cause: unknown) {
    super("the turn failed after its request was applied", { cause });
    this.name = "AppliedRequestError";
  }
}

/** What follows the request's change, its failures marked as coming after it (AppError answers stand). */
async function afterApplied<T>(rest: () => Promise<T>): Promise<T> {
  try {
    return await rest();
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppliedRequestError(error);
  }
}

/** Notes the turn on its chat (its model, a first title) and loads what it sends. */
async function noteAndLoad(
  db: Db,
  chat: Chat,
  modelChange: string | undefined,
  titled: boolean,
): Promise<PreparedTurn> {
  const firstUser = titled ? null : await firstUserMessage(db, chat.id);
  const title = firstUser && titleFromMessage(messageText(rowToUIMessage(firstUser)));
  // Both at once: the load reads from the watermark the chat had at the request, and is
  // checked against the one the chat has now (an edit just now may have moved it back).
  const [noted, rows] = await bothSettled(
    noteTurnOnChat(db, chat.id, {
      modelId: modelChange,
      title: title ?? undefined,
    }),
    loadForTurn(db, chat),
  );
  return loaded(db, noted ?? chat, rows);
}

/**
 * A write and a read run side by side, both settled before either's failure is thrown: a turn
 * refused while its write still ran would free its chat under that write.
 */
async function bothSettled<A, B>(write: Promise<A>, read: Promise<B>): Promise<[A, B]> {
  const [written, got] = await Promise.allSettled([write, read]);
  if (written.status === "rejected") throw written.reason;
  if (got.status === "rejected") throw got.reason;
  return [written.value, got.value];
}

/** A write the turn awaits later: its failure is handled there, never left unhandled meanwhile. */
function storedBeside(write: Promise<void>): Promise<void> {
  write.catch(() => undefined);
  return write;
}

/**
 * Stores the new message and notes the turn on its chat; fails when the id was taken since the
 * lease's statement found it free (another request stored it first).
 */
async function storeNew(
  db: Db,
  chat: Chat,
  incoming: IncomingUserMessage,
  modelId: string | undefined,
): Promise<void> {
  let stored: Awaited<ReturnType<typeof appendIfNewAndNote>>;
  try {
    stored = await appendIfNewAndNote(db, chat.id, userMessageRow(incoming), { modelId });
  } catch (error) {
    // Deleted since the lease's statement read it (the delete does not wait for the lease):
    // there is nothing to send it to again.
    if (isDeletedChatReference(error)) throw chatDeleted();
    throw isDatabaseUnavailable(error)
      ? databaseUnavailable(error)
      : new AppError(
          "unavailable:message",
          "Your message could not be stored, so it was not answered. Send it again.",
          { cause: error },
        );
  }
  if (!stored) throw new AppError("conflict:message", "That message id is already in use.");
}

/**
 * The turn for `chat` as it is now, from rows read for the state the request saw: read again
 * when they do not serve it (`covers`).
 */
async function loaded(db: Db, chat: Chat, read: KeyedMessage[]): Promise<PreparedTurn> {
  const rows = covers(read, chat) ? read : await loadForTurn(db, chat);
  return {
    chat,
    history: rows.map(rowToUIMessage),
    positions: positionsOf(rows),
  };
}

/**
 * With compaction off a turn sends everything after a summary already there (none: the whole
 * history), unedited, so it loads all of it.
 */
function loadForTurn(db: Db, chat: Chat): Promise<KeyedMessage[]> {
  return env().compaction.enabled
    ? loadTurnHistory(db, chat.id, {
        summary: chat.contextSummary,
        watermark: chat.summaryWatermark,
      })
    : loadKeyedHistory(db, chat.id);
}

/**
 * Rows loaded for one state still serve `chat`'s: they hold its watermark and every message
 * after it (pinned rows are read wherever they are, so a watermark that is a pinned message
 * may be among rows that skip what follows it), or they are the whole history (every seq from
 * 0 on; pinned rows alone can start at 0 too).
 */
function covers(rows: readonly KeyedMessage[], chat: Chat): boolean {
  const watermark = chat.contextSummary ? chat.summaryWatermark : null;
  const at = watermark === null ? -1 : rows.findIndex((row) => row.id === watermark);
  const from = Math.max(at, 0);
  const first = rows[from]?.seq ?? 0;
  if (at < 0 && first !== 0) return false;
  return rows.slice(from).every((row, index) => row.seq === first + index);
}
