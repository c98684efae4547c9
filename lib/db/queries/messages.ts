import { and, asc, desc, eq, gt, gte, inArray, lt, type SQL, sql } from "drizzle-orm";
import { unionAll } from "drizzle-orm/pg-core";
import type { Db } from "../client";
import { isUniqueViolation } from "../errors";
import { inIdList } from "../id-list";
import { prepared } from "../prepared";
import { type Chat, chat, compactionEvent, type Message, message } from "../schema";
import { storableJson } from "../storable";
import type { Lease } from "./leases";

export type NewMessage = Pick<Message, "id" | "role" | "parts" | "metadata">;

export async function loadHistory(db: Db, chatId: string): Promise<Message[]> {
  return db.select().from(message).where(eq(message.chatId, chatId)).orderBy(asc(message.seq));
}

/** The chat's messages from `fromSeq` on, in order: what an edit or a regenerate rewrites. */
export async function loadHistoryFrom(db: Db, chatId: string, fromSeq: number): Promise<Message[]> {
  return db
    .select()
    .from(message)
    .where(and(eq(message.chatId, chatId), gte(message.seq, fromSeq)))
    .orderBy(asc(message.seq));
}

/** A row that is a message, not a compaction's entry in the timeline. */
const isNotEntry = sql`${message.metadata} ->> 'compaction' is distinct from 'true'`;

/**
 * The chat's last message (compaction entries aside), or its last before `beforeSeq`; null when
 * there is none.
 */
export async function lastMessage(
  db: Db,
  chatId: string,
  beforeSeq?: number,
): Promise<Message | null> {
  const [row] = await db
    .select()
    .from(message)
    .where(
      and(
        eq(message.chatId, chatId),
        isNotEntry,
        beforeSeq === undefined ? undefined : lt(message.seq, beforeSeq),
      ),
    )
    .orderBy(desc(message.seq))
    .limit(1);
  return row ?? null;
}

/** Where each of `ids` stands in the chat (its seq); an id the chat does not hold is missing. */
export async function seqsOf(
  db: Db,
  chatId: string,
  ids: readonly string[],
): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: message.id, seq: message.seq })
    .from(message)
    .where(and(eq(message.chatId, chatId), inIdList(message.id, ids)));
  return new Map(rows.map((row) => [row.id, row.seq]));
}

/**
 * Rows per statement when many messages are written at once: Postgres binds at most 65,535
 * values in one statement, and a message row sends seven (a restored version of 10,000
 * messages in one INSERT was refused).
 */
const INSERT_BATCH_ROWS = 1_000;

/** Writes many message rows in their order, a batch per statement (in the caller's transaction). */
export async function insertMessageRows(
  db: Db,
  rows: readonly (typeof message.$inferInsert)[],
): Promise<void> {
  for (let from = 0; from < rows.length; from += INSERT_BATCH_ROWS) {
    await db.insert(message).values(rows.slice(from, from + INSERT_BATCH_ROWS));
  }
}

/**
 * A stored message as a turn reads it: what it sends and where it sits (not its chat or time,
 * which a turn never reads, nor pays to parse), with a key of its content: its id and a digest
 * of its role, parts and metadata, taken by Postgres as it reads the row. Equal keys mean equal
 * messages, so what is derived from one (its parsed metadata, its count units: lib/message,
 * lib/context) can be kept across turns, though an edit rewrites a message's parts in place
 * under the same id.
 */
export type KeyedMessage = Pick<Message, "id" | "seq" | "role" | "parts" | "metadata"> & {
  contentKey: string;
};

/**
 * `seq >= from` where the statement computes `from` itself (the watermark's place): Postgres
 * guesses a third of the chat for a bound it cannot see, and on a chat that is most of the
 * table it then reads every row rather than the index (10,000 rows, 10 ms, for the 21 a turn
 * sends). Closed at the top as well, a pair of unseen bounds is guessed narrow (0.5 %), and
 * the (chat_id, seq) index is used.
 */
export const seqFrom = (seq: SQL, from: SQL) => sql`(${seq} >= ${from} and ${seq} <= 2147483647)`;

/**
 * Where a turn's rows start in chat `chatId`: the watermark's place, or the latest user message
 * when that is earlier (a long tool loop after it). LEAST skips a NULL: a watermark no longer
 * stored reads from the latest user message, and the caller reads again. The latest user
 * message by a backward walk of the (chat_id, seq) index, not max() over the chat.
 */
export const turnStartSeq = (chatId: SQL, watermark: SQL) => sql`least(
  (select w.seq from ${message} w where w.chat_id = ${chatId} and w.id = ${watermark}),
  (select u.seq from ${message} u where u.chat_id = ${chatId} and u.role = 'user'
    order by u.seq desc limit 1))`;

/**
 * The content key of a `message` row named `row` in the statement: concat_ws skips a NULL
 * metadata; no JSON text holds chr(31) unescaped, so fields cannot run together. SHA-256, not
 * md5: md5() is refused where Postgres runs in FIPS mode.
 */
export const contentKeyOf = (row: string) =>
  sql.raw(
    `${row}.id || ':' || encode(sha256(convert_to(concat_ws(chr(31), ${row}.role, ${row}.parts::text, ${row}.metadata::text), 'UTF8')), 'base64')`,
  );

const keyedColumns = {
  id: message.id,
  seq: message.seq,
  role: message.role,
  parts: message.parts,
  metadata: message.metadata,
  contentKey: sql<string>`${contentKeyOf('"message"')}`,
};

/** The whole history, each row with its content key (what a turn sends when nothing is summarized). */
export async function loadKeyedHistory(db: Db, chatId: string): Promise<KeyedMessage[]> {
  const query = prepared(db, "load_keyed_history", (on, name) =>
    on
      .select(keyedColumns)
      .from(message)
      .where(eq(message.chatId, sql.placeholder("chatId")))
      .orderBy(asc(message.seq))
      .prepare(name),
  );
  return query.execute({ chatId });
}

/** Which of `ids` are stored, in any chat (a restored version may hold 65,535 and more). */
export async function storedIdsAmong(db: Db, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.select({ id: message.id }).from(message).where(inIdList(message.id, ids));
  return rows.map((row) => row.id);
}

/**
 * Messages the user unpinned before a summary told them, now that a compaction's summary does:
 * no longer kept verbatim. One pinned again since is left pinned. Called in the transaction that
 * records the compaction's event, so `settledAt` is that event's time to the microsecond.
 */
export async function settleFoldedUnpins(
  db: Db,
  chatId: string,
  messageIds: readonly string[],
): Promise<void> {
  if (messageIds.length === 0) return;
  await db
    .update(message)
    .set({
      metadata: sql`(${message.metadata} - 'pinned' - 'foldPending') || jsonb_build_object('unpinned', true, 'settledAt', now())`,
    })
    .where(
      and(
        eq(message.chatId, chatId),
        inArray(message.id, [...messageIds]),
        sql`${message.metadata} ->> 'foldPending' = 'true'`,
      ),
    );
}

/**
 * After a rollback to an earlier summary: messages unpinned and folded since are told by no
 * summary now, so they are pending again (verbatim until the next fold tells them). `toldBy` is
 * the event that wrote the summary the chat now has: a message a fold told at or before it stays
 * told (that summary was written on top of the one that told it). Without it (no summary, or
 * one whose event is not known), every such message is pending again.
 */
export async function reopenFoldedUnpins(db: Db, chatId: string, toldBy?: string): Promise<void> {
  const settledAt = sql`(${message.metadata} ->> 'settledAt')::timestamptz`;
  await db
    .update(message)
    .set({
      metadata: sql`(${message.metadata} - 'settledAt') || '{"pinned": true, "foldPending": true}'::jsonb`,
    })
    .where(
      and(
        eq(message.chatId, chatId),
        sql`${message.metadata} ->> 'unpinned' = 'true'`,
        toldBy
          ? sql`not coalesce(${settledAt} <= (select ${compactionEvent.createdAt} from ${compactionEvent} where ${compactionEvent.id} = ${toldBy} and ${compactionEvent.chatId} = ${chatId}), false)`
          : undefined,
      ),
    );
}

/** A pinned message as the memory panel lists it: who wrote it and how its text begins. */
export type PinnedMessage = { id: string; role: Message["role"]; excerpt: string };

/** Characters of a pinned message's text the memory panel shows. */
const PIN_EXCERPT_CHARS = 160;

/**
 * The messages the user pinned, oldest first, each with the start of its text, cut in the
 * database: read without the rest of the chat, and a long pinned message (a pasted document)
 * is not read whole to show one line.
 */
export async function pinnedMessages(db: Db, chatId: string): Promise<PinnedMessage[]> {
  // Whitespace folded and the start trimmed before the cut (from a few lines' worth of text), so
  // one past the limit tells a longer text.
  const text = sql<string>`coalesce((
    select left(
      ltrim(regexp_replace(
        left(string_agg(part ->> 'text', ' ' order by ordinality), ${PIN_EXCERPT_CHARS * 4}),
        '[[:space:]]+', ' ', 'g')),
      ${PIN_EXCERPT_CHARS + 2})
    from jsonb_array_elements(${message.parts}) with ordinality as p(part, ordinality)
    where part ->> 'type' = 'text'
  ), '')`;
  const rows = await db
    .select({ id: message.id, role: message.role, text })
    .from(message)
    .where(
      and(
        eq(message.chatId, chatId),
        sql`${message.metadata} ->> 'pinned' = 'true'`,
        sql`${message.metadata} ->> 'foldPending' is null`,
      ),
    )
    .orderBy(asc(message.seq));
  return rows.map(({ id, role, text }) => ({ id, role, excerpt: excerptOf(text) }));
}

/** Where a text's user-perceived characters end (a ZWJ family, a flag, a letter with its marks). */
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * One line of a message's text: whitespace folded, cut at the limit with an ellipsis. Counted in
 * characters as the database counts them (code points), and cut between whole graphemes, so no
 * emoji is split (a family of four is seven code points).
 */
function excerptOf(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  const chars = Array.from(line);
  if (chars.length <= PIN_EXCERPT_CHARS) return line;
  let kept = "";
  let count = 0;
  for (const { segment } of graphemes.segment(line)) {
    const size = Array.from(segment).length;
    if (count + size > PIN_EXCERPT_CHARS - 1) break;
    kept += segment;
    count += size;
  }
  // One grapheme past the limit on its own (hundreds of marks on one letter): cut in code points.
  if (!kept) kept = chars.slice(0, PIN_EXCERPT_CHARS - 1).join("");
  return `${kept.trimEnd()}…`;
}

export type MessagePage = { messages: Message[]; hasMore: boolean };

/**
 * One page of a chat for the browser: the `limit` newest messages older than the message
 * `before` (the newest of the chat without it), oldest first, and whether older ones remain.
 * Null when `before` is not a message of this chat.
 */
export async function loadMessagePage(
  db: Db,
  chatId: string,
  page: { before?: string; limit: number },
): Promise<MessagePage | null> {
  let beforeSeq: number | undefined;
  if (page.before !== undefined) {
    const cursor = await findMessage(db, chatId, page.before);
    if (!cursor) return null;
    beforeSeq = cursor.seq;
  }
  const rows = await db
    .select()
    .from(message)
    .where(
      and(
        eq(message.chatId, chatId),
        beforeSeq === undefined ? undefined : lt(message.seq, beforeSeq),
      ),
    )
    .orderBy(desc(message.seq))
    .limit(page.limit + 1);
  return { messages: rows.slice(0, page.limit).reverse(), hasMore: rows.length > page.limit };
}

/**
 * The chat from message `id` on, or its newest `limit` when fewer follow it (or it is gone), and
 * whether older messages remain: what the page shows after a version switch.
 */
export async function messagesFrom(
  db: Db,
  chatId: string,
  id: string,
  limit: number,
): Promise<MessagePage> {
  const from = await findMessage(db, chatId, id);
  if (from) {
    const tail = await loadHistoryFrom(db, chatId, from.seq);
    if (tail.length >= limit) {
      const [older] = await db
        .select({ seq: message.seq })
        .from(message)
        .where(and(eq(message.chatId, chatId), lt(message.seq, from.seq)))
        .limit(1);
      return { messages: tail, hasMore: older !== undefined };
    }
  }
  return (await loadMessagePage(db, chatId, { limit })) ?? { messages: [], hasMore: false };
}

/**
 * What a turn needs of the stored history (DESIGN §8.1): the watermark message
 * and everything after it, reaching back to the latest user message when the
 * summary covers it (the view pins it), and the messages the user pinned.
 * Nothing else the summary covers is read, so a turn costs what it sends, not the chat's length. With no
 * summary, or a watermark that names a message no longer stored, it is the
 * whole history (the view then needs all of it).
 */
export async function loadTurnHistory(
  db: Db,
  chatId: string,
  state: { summary: string | null; watermark: string | null },
): Promise<KeyedMessage[]> {
  const watermark = state.summary ? state.watermark : null;
  if (!watermark) return loadKeyedHistory(db, chatId);
  // The rows from turnStartSeq on (an unknown watermark is caught below), and the pinned ones
  // before, each through its own index: in one condition (seq >= … or pinned) Postgres read
  // every stored message of the chat.
  const query = prepared(db, "load_turn_history", (on, name) => {
    const chatId = sql.placeholder("chatId");
    const from = sql`(select ${turnStartSeq(sql`${chatId}`, sql`${sql.placeholder("watermark")}`)})`;
    return unionAll(
      on
        .select(keyedColumns)
        .from(message)
        .where(and(eq(message.chatId, chatId), seqFrom(sql`${message.seq}`, from))),
      // A pinned message is sent verbatim though the summary covers it (lib/message/pins.ts).
      on
        .select(keyedColumns)
        .from(message)
        .where(
          and(
            eq(message.chatId, chatId),
            sql`${message.metadata} ->> 'pinned' = 'true'`,
            sql`${seqFrom(sql`${message.seq}`, from)} is not true`,
          ),
        ),
    ).prepare(name);
  });
  const rows = (await query.execute({ chatId, watermark })).sort((a, b) => a.seq - b.seq);
  return rows.some((row) => row.id === watermark) ? rows : loadKeyedHistory(db, chatId);
}

/**
 * Whether rows `loadTurnHistory` returned begin with the chat's first message: with no summary,
 * or a watermark no longer stored, it read the whole history.
 */
export function holdsChatStart(
  rows: readonly { id: string }[],
  state: { summary: string | null; watermark: string | null },
): boolean {
  const watermark = state.summary ? state.watermark : null;
  return !watermark || !rows.some((row) => row.id === watermark);
}

/**
 * Each loaded message's 1-based number in the chat, as the summary's references and `recall`
 * cite it (seq + 1): pinned messages the summary covers come before the watermark in the rows
 * `loadTurnHistory` returns, out of order, so one offset from the first row cannot number them.
 */
export function positionsOf(rows: readonly Pick<Message, "id" | "seq">[]): Map<string, number> {
  return new Map(rows.map((row) => [row.id, row.seq + 1]));
}

/** The chat's first user message (it names a new chat), or null. */
export async function firstUserMessage(db: Db, chatId: string): Promise<Message | null> {
  const [row] = await db
    .select()
    .from(message)
    .where(and(eq(message.chatId, chatId), eq(message.role, "user")))
    .orderBy(asc(message.seq))
    .limit(1);
  return row ?? null;
}

/** Appends after the last message and marks the chat as just used, in one statement. */
export async function appendMessage(db: Db, chatId: string, input: NewMessage): Promise<Message> {
  return atNextPlace(() => appendOnce(db, chatId, input));
}

/**
 * `appendMessage` by the holder of the chat's turn lease: stored only while `lease`'s token is
 * the one on the chat's row. Null, writing nothing, when it is not: the lease ran out unnoticed
 * (the process stalled past its term) and another turn may hold the chat, or the chat is gone.
 */
export async function appendMessageAsTurnHolder(
  db: Db,
  chatId: string,
  input: NewMessage,
  lease: Lease,
): Promise<Message | null> {
  // Prepared: every reply is stored through it.
  const query = prepared(db, "append_message_as_turn_holder", (on, name) => {
    const row = placeholderRow();
    // The row's values read from the chat's row, where it holds the token: none elsewhere.
    // The message first, then the chat marked, as every append takes the two.
    const held = on
      .select({
        id: sql<string>`${sql.placeholder("id")}::text`.as("id"),
        chatId: chat.id,
        seq: row.seq.as("seq"),
        role: sql<string>`${sql.placeholder("role")}::text`.as("role"),
        parts: row.parts.as("parts"),
        metadata: row.metadata.as("metadata"),
        createdAt: sql<Date>`now()`.as("created_at"),
      })
      .from(chat)
      .where(
        and(
          eq(chat.id, sql.placeholder("chatId")),
          eq(chat.activeTurnUntil, sql.placeholder("until")),
        ),
      );
    const inserted = on.$with("inserted").as(on.insert(message).select(held).returning());
    const touched = on.$with("touched").as(
      on
        .update(chat)
        .set({ updatedAt: sql`now()` })
        .where(inArray(chat.id, on.select({ chatId: inserted.chatId }).from(inserted)))
        .returning({ id: chat.id }),
    );
    return on.with(inserted, touched).select().from(inserted).prepare(name);
  });
  const [row] = await atNextPlace(() =>
    query.execute({ ...rowParams(chatId, input), until: lease.until }),
  );
  return row ?? null;
}

/**
 * `appendMessage` inside a transaction `tx`: each attempt in a savepoint of its own, so that a
 * place another writer took at the same moment is tried again after it (a failed statement
 * would otherwise end the whole transaction). Call it before the transaction locks the chat
 * row: every append inserts its message first and marks the chat after, and a writer taking
 * the two in the other order can deadlock with one.
 */
export async function appendMessageInTransaction(
  tx: Db,
  chatId: string,
  input: NewMessage,
): Promise<Message> {
  return atNextPlace(() =>
    tx.transaction((savepoint) => appendOnce(savepoint as unknown as Db, chatId, input)),
  );
}

async function appendOnce(db: Db, chatId: string, input: NewMessage): Promise<Message> {
  // Prepared: every reply is stored through it.
  const query = prepared(db, "append_message", (on, name) => {
    const inserted = on
      .$with("inserted")
      .as(on.insert(message).values(placeholderRow()).returning());
    const touched = on.$with("touched").as(
      on
        .update(chat)
        .set({ updatedAt: sql`now()` })
        .where(eq(chat.id, sql.placeholder("chatId")))
        .returning({ id: chat.id }),
    );
    return on.with(inserted, touched).select().from(inserted).prepare(name);
  });
  const [row] = await query.execute(rowParams(chatId, input));
  if (!row) throw new Error("insert into message returned no row");
  return row;
}

/**
 * A new message's columns as placeholders (see rowParams); `seq`, which keeps the order, is
 * taken in the insert: after the chat's last.
 */
function placeholderRow() {
  return {
    id: sql.placeholder("id"),
    chatId: sql.placeholder("chatId"),
    role: sql.placeholder("role"),
    // Cast here, serialized in rowParams: bound straight to the column, Drizzle would encode
    // the value itself and store a missing metadata as JSON null, not SQL NULL.
    parts: sql`${sql.placeholder("parts")}::jsonb`,
    metadata: sql`${sql.placeholder("metadata")}::jsonb`,
    seq: sql<number>`(select coalesce(max(${message.seq}), -1) + 1 from ${message} where ${message.chatId} = ${sql.placeholder("chatId")})`,
  };
}

/**
 * Runs an append again when another writer took the same place at the same moment: a turn
 * storing its messages and a background compaction storing its trace entry both insert "after
 * the chat's last", and the unique (chat, seq) index refuses the later one. Postgres raises that
 * only once the other insert has committed, so the next attempt sees it and goes after it.
 */
async function atNextPlace<T>(append: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await append();
    } catch (error) {
      if (attempt >= PLACE_ATTEMPTS || !isUniqueViolation(error, SEQ_INDEX)) throw error;
    }
  }
}

/** The unique index that keeps one message per place in a chat (schema.ts). */
const SEQ_INDEX = "message_chat_seq_idx";
/** Each round one of the writers racing for a place wins: enough for far more than ever race. */
const PLACE_ATTEMPTS = 16;

/** The values for placeholderRow: JSON columns serialized here (SQL NULL for no metadata). */
function rowParams(chatId: string, input: NewMessage) {
  return {
    id: input.id,
    chatId,
    role: input.role,
    parts: JSON.stringify(storableJson(input.parts)),
    metadata: input.metadata === null ? null : JSON.stringify(storableJson(input.metadata)),
  };
}

/**
 * Appends a message whose id may already be taken (a user message the browser sends is
 * either new or an edit): one statement when it is new; null, writing nothing, when a
 * message with that id exists in any chat. The chat's `updatedAt` is left to the caller.
 */
export async function appendIfNew(
  db: Db,
  chatId: string,
  input: NewMessage,
): Promise<Message | null> {
  const query = prepared(db, "append_if_new", (on, name) =>
    on
      .insert(message)
      .values(placeholderRow())
      .onConflictDoNothing({ target: message.id })
      .returning()
      .prepare(name),
  );
  const [row] = await atNextPlace(() => query.execute(rowParams(chatId, input)));
  return row ?? null;
}

/**
 * `appendIfNew`, and when the message is new, the turn noted on its chat in the same statement
 * (just used, and its model, picked as of now): the chat as it is now and the message as a turn
 * reads it (keyed, as loadTurnHistory returns it), or null, writing nothing, when the id is taken.
 */
export async function appendIfNewAndNote(
  db: Db,
  chatId: string,
  input: NewMessage,
  note: { modelId?: string },
): Promise<{ chat: Chat; message: KeyedMessage } | null> {
  // Prepared: it is every turn's first write, and building this statement costs more than
  // running it. A null model keeps the chat's own.
  const query = prepared(db, "append_if_new_and_note", (on, name) => {
    const inserted = on.$with("inserted").as(
      on
        .insert(message)
        .values(placeholderRow())
        .onConflictDoNothing({ target: message.id })
        .returning({
          ...keyedColumns,
          contentKey: keyedColumns.contentKey.as("content_key"),
          chatId: message.chatId,
        }),
    );
    const noted = on.$with("noted").as(
      on
        .update(chat)
        .set({
          modelId: sql`coalesce(${sql.placeholder("modelId")}, ${chat.modelId})`,
          // The turn picks its model now: a pick made before it that lands later loses.
          modelPickedAt: sql`now()`,
          updatedAt: sql`now()`,
        })
        .where(inArray(chat.id, on.select({ chatId: inserted.chatId }).from(inserted)))
        .returning(),
    );
    return on
      .with(inserted, noted)
      .select()
      .from(noted)
      .innerJoin(inserted, sql`true`)
      .prepare(name);
  });
  const params = { ...rowParams(chatId, input), modelId: note.modelId ?? null };
  const [row] = await atNextPlace(() => query.execute(params));
  if (!row) return null;
  const { chatId: _, ...keyed } = row.inserted;
  return { chat: row.noted, message: keyed };
}

/**
 * Whether the chat holds the message `id` with these parts (compared as JSON values): a rewrite
 * of the history either removes every message after the one it starts at or changes that one.
 */
export async function holdsMessageAsRead(
  db: Db,
  chatId: string,
  id: string,
  parts: unknown,
): Promise<boolean> {
  const [row] = await db
    .select({ id: message.id })
    .from(message)
    .where(
      and(
        eq(message.chatId, chatId),
        eq(message.id, id),
        sql`${message.parts} = ${JSON.stringify(storableJson(parts))}::jsonb`,
      ),
    );
  return row !== undefined;
}

/** A message by id in any chat (ids are unique across chats), or null. */
/** Whether `id` is a message of one of `userId`'s chats (any of them, shown or not). */
export async function isMessageOfUser(db: Db, userId: string, id: string): Promise<boolean> {
  const [row] = await db
    .select({ id: message.id })
    .from(message)
    .innerJoin(chat, eq(chat.id, message.chatId))
    .where(and(eq(message.id, id), eq(chat.userId, userId)));
  return row !== undefined;
}

export async function findMessageAnywhere(db: Db, id: string): Promise<Message | null> {
  const [row] = await db.select().from(message).where(eq(message.id, id));
  return row ?? null;
}

/**
 * What an edit of `messageId` would move to an older version (GET /branches?messageId=): how
 * many messages follow it, and the chat's last message, compaction entries aside — counted by
 * Postgres, not read: the question comes before every edit, and the chat may be long. One
 * snapshot, so the count runs through that last message. Null when the chat has no such message.
 */
export async function rewriteReach(
  db: Db,
  chatId: string,
  messageId: string,
): Promise<{ laterMessages: number; throughId: string | null } | null> {
  return db.transaction(
    async (txn) => {
      const tx = txn as unknown as Db;
      const [asked] = await tx
        .select({ seq: message.seq })
        .from(message)
        .where(and(eq(message.chatId, chatId), eq(message.id, messageId)));
      if (!asked) return null;
      const [counted] = await tx
        .select({ later: sql<number>`count(*)::int` })
        .from(message)
        .where(and(eq(message.chatId, chatId), gt(message.seq, asked.seq), isNotEntry));
      const last = await lastMessage(tx, chatId);
      return { laterMessages: counted?.later ?? 0, throughId: last?.id ?? null };
    },
    { isolationLevel: "repeatable read", accessMode: "read only" },
  );
}

/**
 * Drops the message at `seq` and everything after it (edit and regenerate rewrite history).
 * With `keepCompactionEntries`, the timeline entries of compactions among them stay where they
 * are: the summary they wrote still holds what they folded.
 */
export async function truncateFrom(
  db: Db,
  chatId: string,
  seq: number,
  options: { keepCompactionEntries?: boolean } = {},
): Promise<number> {
  const removed = await db
    .delete(message)
    .where(
      and(
        eq(message.chatId, chatId),
        gte(message.seq, seq),
        options.keepCompactionEntries ? isNotEntry : undefined,
      ),
    )
    .returning({ id: message.id });
  return removed.length;
}

export async function findMessage(db: Db, chatId: string, id: string): Promise<Message | null> {
  const [row] = await db
    .select()
    .from(message)
    .where(and(eq(message.chatId, chatId), eq(message.id, id)));
  return row ?? null;
}

/**
 * Whether the chat holds a message after `throughId` that is not a compaction's entry: the chat
 * went on past the last message a page showed (another tab's turn). An id the chat does not
 * hold (a reply the page has that was never stored), or none, says nothing: false. Read from
 * that message on, through the primary key and the chat's (chat_id, seq) index: a turn's
 * statement must not read the whole chat.
 */
export const wentOnPast = (chatId: SQL, throughId: SQL) => sql<boolean>`exists (
  select 1 from ${message} through
  where through.id = ${throughId} and through.chat_id = ${chatId}
    and exists (
      select 1 from ${message} later
      where later.chat_id = through.chat_id and later.seq > through.seq
        and coalesce(later.metadata ->> 'compaction', '') <> 'true'))`;

/**
 * `wentOnPast` for a new message (an id no stored message holds: an edit's is checked as an
 * edit), for a turn that did not read it with its lease.
 */
export async function newMessageWentOnPast(
  db: Db,
  chatId: string,
  messageId: string,
  throughId: string,
): Promise<boolean> {
  const result = await db.execute(
    sql`select ${wentOnPast(sql`${chatId}::uuid`, sql`${throughId}::text`)}
      and not exists (select 1 from ${message} m where m.id = ${messageId}) as went_on`,
  );
  const [row] = (result as unknown as { rows: Array<{ went_on: boolean }> }).rows;
  return row?.went_on === true;
}
