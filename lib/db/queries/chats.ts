import { and, count, desc, eq, gt, isNull, lt, ne, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { prepared } from "../prepared";
import { type Chat, chat, message } from "../schema";

/** What the browser sees of a chat: no compaction internals. */
export type ChatSummary = Pick<Chat, "id" | "title" | "modelId" | "createdAt" | "updatedAt">;

const summaryColumns = {
  id: chat.id,
  title: chat.title,
  modelId: chat.modelId,
  createdAt: chat.createdAt,
  updatedAt: chat.updatedAt,
};

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A chat as the list shows it. Its times are exact ISO text, not Dates: a Date keeps milliseconds
 * of Postgres's microseconds, and a cursor rounded down would skip chats within that millisecond.
 */
export type ChatListing = Omit<ChatSummary, "createdAt" | "updatedAt"> & {
  createdAt: string;
  updatedAt: string;
};

export type ChatPage = { chats: ChatListing[]; hasMore: boolean };

/** The instant as UTC ISO 8601 with all six of Postgres's fractional digits. */
function exactIso(column: typeof chat.createdAt | typeof chat.updatedAt) {
  return sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

const listingColumns = {
  id: chat.id,
  title: chat.title,
  modelId: chat.modelId,
  createdAt: exactIso(chat.createdAt),
  updatedAt: exactIso(chat.updatedAt),
};

/**
 * One page of the user's chats, most recently active first: the `limit` chats after the chat
 * `before` in that order (from the top without it). With `updatedAt` and `createdAt` (as the
 * list showed them for `before`) the page starts from those values, so a chat deleted or moved up
 * since still marks the place. `before` alone starts from where that chat is now; null when it is
 * not one of the user's chats. Values are compared in the database, where the times are exact.
 */
export async function listChatPage(
  db: Db,
  userId: string,
  page: { before?: string; updatedAt?: string; createdAt?: string; limit: number },
): Promise<ChatPage | null> {
  let after: SQL | undefined;
  if (page.before !== undefined && page.updatedAt !== undefined && page.createdAt !== undefined) {
    const cursor = sql`(${page.updatedAt}::timestamptz, ${page.createdAt}::timestamptz, ${page.before}::uuid)`;
    after = sql`(${chat.updatedAt}, ${chat.createdAt}, ${chat.id}) < ${cursor}`;
  } else if (page.before !== undefined) {
    if (!(await findChatForUser(db, userId, page.before))) return null;
    const cursor = db
      .select({ updatedAt: chat.updatedAt, createdAt: chat.createdAt, id: chat.id })
      .from(chat)
      .where(eq(chat.id, page.before));
    after = sql`(${chat.updatedAt}, ${chat.createdAt}, ${chat.id}) < ${cursor}`;
  }
  const rows = await db
    .select(listingColumns)
    .from(chat)
    .where(and(eq(chat.userId, userId), after))
    .orderBy(desc(chat.updatedAt), desc(chat.createdAt), desc(chat.id))
    .limit(page.limit + 1);
  return { chats: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/** The chat if it exists and belongs to the user; anything else is null. */
export async function findChatForUser(
  db: Db,
  userId: string,
  chatId: string,
): Promise<Chat | null> {
  if (!UUID_PATTERN.test(chatId)) return null;
  const query = prepared(db, "find_chat_for_user", (on, name) =>
    on
      .select()
      .from(chat)
      .where(
        and(eq(chat.id, sql.placeholder("chatId")), eq(chat.userId, sql.placeholder("userId"))),
      )
      .prepare(name),
  );
  const [row] = await query.execute({ chatId, userId });
  return row ?? null;
}

/**
 * The user's newest chat if nothing has happened in it since it was made: no title given (at its
 * creation or by a rename, whatever the title reads), no model (one chosen at its creation, as
 * the home page's message does, counts as used), no message, no summary, its updatedAt still its
 * createdAt (a turn, a rename or a model picked each moves it), and no turn or compaction holding
 * it (a first turn takes the chat before its message is stored: another tab's New chat must not
 * land in it); else null.
 */
export async function newestUnusedChat(db: Db, userId: string): Promise<ChatListing | null> {
  const [newest] = await db
    .select({
      ...listingColumns,
      unused: sql<boolean>`${chat.updatedAt} = ${chat.createdAt}
        and not ${chat.titled}
        and ${chat.modelId} is null
        and ${chat.contextSummary} is null
        and not exists (select 1 from ${message} m where m.chat_id = "chat"."id")
        and (${chat.activeTurnUntil} is null or ${chat.activeTurnUntil} <= now())
        and (${chat.compactionUntil} is null or ${chat.compactionUntil} <= now())`,
    })
    .from(chat)
    .where(eq(chat.userId, userId))
    .orderBy(desc(chat.updatedAt), desc(chat.createdAt), desc(chat.id))
    .limit(1);
  if (!newest?.unused) return null;
  const { unused: _, ...listing } = newest;
  return listing;
}

/**
 * A new chat, as the list shows it (its times exact, so it pages like the chats listed with it).
 * `titled` false: `title` only stands in until the chat's first turn names it.
 */
export async function createChat(
  db: Db,
  input: { userId: string; title: string; titled?: boolean; modelId?: string | null },
): Promise<ChatListing> {
  const [row] = await db
    .insert(chat)
    .values({
      userId: input.userId,
      title: input.title,
      titled: input.titled ?? true,
      modelId: input.modelId ?? null,
    })
    .returning(listingColumns);
  if (!row) throw new Error("insert into chat returned no row");
  return row;
}

/**
 * A rename or a model pick (the compaction columns are not reachable from here: only
 * lib/db/compaction-state.ts writes them). A pick that says when it was made (`pickedAt`, the server's clock
 * as the browser tells it, taken as no later than the server's now) changes the chat only when
 * no later pick is stored: a save that reached the server after a later one does not take the
 * chat back. "superseded" then; null when the chat is gone.
 */
export async function updateChat(
  db: Db,
  chatId: string,
  patch: { title?: string; modelId?: string | null; pickedAt?: Date },
): Promise<ChatSummary | "superseded" | null> {
  const pickedAt =
    patch.modelId !== undefined && patch.pickedAt
      ? sql`least(${patch.pickedAt.toISOString()}::timestamptz, now())`
      : undefined;
  const [row] = await db
    .update(chat)
    .set({
      title: patch.title,
      // Renamed: the user's title stands, and no turn names the chat from its first message.
      titled: patch.title === undefined ? undefined : true,
      modelId: patch.modelId,
      modelPickedAt: pickedAt,
      updatedAt: sql`now()`,
    })
    .where(
      and(
        eq(chat.id, chatId),
        pickedAt ? or(isNull(chat.modelPickedAt), lt(chat.modelPickedAt, pickedAt)) : undefined,
      ),
    )
    .returning(summaryColumns);
  if (row) return row;
  if (!pickedAt) return null;
  const [still] = await db.select({ id: chat.id }).from(chat).where(eq(chat.id, chatId));
  return still ? "superseded" : null;
}

/**
 * A turn ran: the chat remembers its model (picked as of now: a pick made before the turn that
 * reaches the server after it is refused as superseded), takes its first title, and moves up
 * the list. The title is set only while the chat has none given: a rename that came after the
 * turn read the chat stands, whatever it reads.
 */
export async function noteTurnOnChat(
  db: Db,
  chatId: string,
  changes: { modelId?: string; title?: string },
): Promise<Chat | null> {
  const title =
    changes.title === undefined
      ? undefined
      : sql`case when ${chat.titled} then ${chat.title} else ${changes.title} end`;
  const [row] = await db
    .update(chat)
    .set({
      modelId: changes.modelId,
      modelPickedAt: sql`now()`,
      title,
      titled: changes.title === undefined ? undefined : true,
      updatedAt: sql`now()`,
    })
    .where(eq(chat.id, chatId))
    .returning();
  return row ?? null;
}

/** A turn (or a compaction) holds the chat's lease right now: a reply is being written. */
export function isReplying(row: Pick<Chat, "activeTurnUntil">, now = Date.now()): boolean {
  return row.activeTurnUntil !== null && row.activeTurnUntil.getTime() > now;
}

/** A background compaction holds the chat's compaction lease right now: the summarizer runs. */
export function isCompacting(row: Pick<Chat, "compactionUntil">, now = Date.now()): boolean {
  return row.compactionUntil !== null && row.compactionUntil.getTime() > now;
}

/** The user's chats on which a turn or a background compaction holds its lease right now. */
export async function busyChatIdsOf(db: Db, userId: string): Promise<string[]> {
  const rows = await db
    .select({ id: chat.id })
    .from(chat)
    .where(
      and(
        eq(chat.userId, userId),
        or(gt(chat.activeTurnUntil, sql`now()`), gt(chat.compactionUntil, sql`now()`)),
      ),
    );
  return rows.map((row) => row.id);
}

/** How many of the user's chats, other than `exceptChatId`, a turn holds right now. */
export async function turnsRunningElsewhere(
  db: Db,
  userId: string,
  exceptChatId: string | undefined,
): Promise<number> {
  const [row] = await db
    .select({ running: count() })
    .from(chat)
    .where(
      and(
        eq(chat.userId, userId),
        gt(chat.activeTurnUntil, sql`now()`),
        exceptChatId ? ne(chat.id, exceptChatId) : undefined,
      ),
    );
  return row?.running ?? 0;
}

/**
 * Deletes every chat of the user; the ids of those a turn or a compaction held. One statement
 * locks each row as it deletes it: a turn taking its chat at that moment either took it before
 * (and is among those returned) or waits for the delete and then finds no chat.
 */
export async function deleteChatsOf(db: Db, userId: string): Promise<string[]> {
  const rows = await db
    .delete(chat)
    .where(eq(chat.userId, userId))
    .returning({
      id: chat.id,
      busy: sql<boolean>`${chat.activeTurnUntil} > now() or ${chat.compactionUntil} > now()`,
    });
  return rows.filter((row) => row.busy).map((row) => row.id);
}

/** The history was rewritten (an edit, a regeneration): an in-flight compaction must not commit. */
export async function bumpHistoryVersion(db: Db, chatId: string): Promise<void> {
  await db
    .update(chat)
    .set({ historyVersion: sql`${chat.historyVersion} + 1` })
    .where(eq(chat.id, chatId));
}

/** The chat's current compaction version (`fallback` when the chat is gone). */
export async function getChatVersion(db: Db, chatId: string, fallback: number): Promise<number> {
  const [row] = await db.select({ version: chat.version }).from(chat).where(eq(chat.id, chatId));
  return row?.version ?? fallback;
}

/**
 * Locks the chat's row for the rest of the transaction. Every transaction that writes a chat's
 * messages and its row takes the row first, in the same order as a compaction's commit (its
 * summary, then the messages it settles), so two of them wait for each other instead of
 * deadlocking. False when the chat is gone (deleted meanwhile).
 */
export async function lockChatRow(tx: Db, chatId: string): Promise<boolean> {
  const rows = await tx.select({ id: chat.id }).from(chat).where(eq(chat.id, chatId)).for("update");
  return rows.length > 0;
}

export async function getChat(db: Db, chatId: string): Promise<Chat | null> {
  const [row] = await db.select().from(chat).where(eq(chat.id, chatId));
  return row ?? null;
}

/**
 * Deletes a chat; its messages and compaction events go with it by cascade. Answers its lease as
 * the delete found it (a turn may have taken it just before), or null when it was gone.
 */
export async function deleteChat(
  db: Db,
  chatId: string,
): Promise<Pick<Chat, "activeTurnUntil" | "compactionUntil"> | null> {
  const [row] = await db
    .delete(chat)
    .where(eq(chat.id, chatId))
    .returning({ activeTurnUntil: chat.activeTurnUntil, compactionUntil: chat.compactionUntil });
  return row ?? null;
}
