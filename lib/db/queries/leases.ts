import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { prepared } from "../prepared";
import { type Chat, chat, message, user } from "../schema";
import { heldByVersion } from "./branches";
import { UUID_PATTERN } from "./chats";
import { contentKeyOf, type KeyedMessage, seqFrom, turnStartSeq, wentOnPast } from "./messages";

/**
 * The chat's lease: "a turn (or a compaction) is running", across server
 * instances. It is a timestamp, so a crashed instance's lease simply runs out;
 * and the exact timestamp a holder wrote is its token — renew and release
 * only succeed for the holder whose token is still on the row, so a late
 * renewal or release can never touch a lease someone else took since.
 */

/**
 * Which of the chat's two leases: a turn's (also taken by compact-now), or a background
 * compaction's. Each is its own column with the same owner-token rules.
 */
export type LeaseKind = "turn" | "compaction";

/** A held lease: its expiry, to the millisecond, is the owner's token. */
export type Lease = { chatId: string; until: Date; kind: LeaseKind };

const columnOf = (kind: LeaseKind) =>
  kind === "turn" ? chat.activeTurnUntil : chat.compactionUntil;
/** An update of one lease column (each spelled out: the compaction writer's guard reads them). */
const setLease = (db: Db, kind: LeaseKind, value: SQL | null) =>
  kind === "turn"
    ? db.update(chat).set({ activeTurnUntil: value })
    : db.update(chat).set({ compactionUntil: value });

/** now() + the lease, cut to milliseconds so a JavaScript Date holds it exactly. */
const until = (leaseSeconds: unknown) =>
  sql`date_trunc('milliseconds', now() + make_interval(secs => ${leaseSeconds}))`;

/** No live lease in `column`: never taken, freed, or run out. */
const isFree = (column: typeof chat.activeTurnUntil | typeof chat.compactionUntil) =>
  sql`(${column} is null or ${column} < now())`;

/** Takes the lease unless a live one is held; null when it is. */
export async function acquireLease(
  db: Db,
  chatId: string,
  leaseMs: number,
  kind: LeaseKind = "turn",
): Promise<Lease | null> {
  // Prepared (per kind): every turn takes the chat's lease.
  const query = prepared(db, `acquire_${kind}_lease`, (on, name) => {
    const column = columnOf(kind);
    return setLease(on, kind, until(sql.placeholder("leaseSeconds")))
      .where(and(eq(chat.id, sql.placeholder("chatId")), isFree(column)))
      .returning({ until: column })
      .prepare(name);
  });
  const [row] = await query.execute({ chatId, leaseSeconds: leaseMs / 1000 });
  return row?.until ? { chatId, until: row.until, kind } : null;
}

/** The turn lease of `userId`'s chat taken when no live one is held, the chat as it is returned. */
const takeOwnTurnLease = (on: Db) =>
  setLease(on, "turn", until(sql.placeholder("leaseSeconds")))
    .where(
      and(
        eq(chat.id, sql.placeholder("chatId")),
        eq(chat.userId, sql.placeholder("userId")),
        isFree(chat.activeTurnUntil),
        // An account disabled since its session was checked takes no chat: the admin's stop
        // went only to the turns that held one then.
        sql`exists (select 1 from ${user} where ${user.id} = ${sql.placeholder("userId")} and ${user.status} = 'active')`,
      ),
    )
    .returning();

/**
 * A turn's first statement: `userId`'s chat, with its turn lease taken in the same update when
 * no live one is held. Null when the chat is not theirs, its lease is held (then look it up
 * and wait for the lease as usual), or the account is no longer active.
 */
export async function acquireTurnLeaseOnOwnChat(
  db: Db,
  userId: string,
  chatId: string,
  leaseMs: number,
): Promise<{ chat: Chat; lease: Lease } | null> {
  if (!UUID_PATTERN.test(chatId)) return null;
  const query = prepared(db, "acquire_turn_lease_on_own_chat", (on, name) =>
    takeOwnTurnLease(on).prepare(name),
  );
  const [row] = await query.execute({ chatId, userId, leaseSeconds: leaseMs / 1000 });
  if (!row?.activeTurnUntil) return null;
  return { chat: row, lease: { chatId, until: row.activeTurnUntil, kind: "turn" } };
}

/** What a new message's turn reads in the statement that takes its lease. */
export type TurnStart = {
  /**
   * The rows the turn sends as the chat stood when the lease was taken, read as
   * loadTurnHistory reads them (with `whole`, every row, as loadKeyedHistory).
   */
  rows: KeyedMessage[];
  /**
   * The message's id is held by no stored message and by no version of this chat: the message
   * is new, not an edit, a clash, or one only a hidden version holds.
   */
  isNew: boolean;
  /**
   * The rows were read from the chat as the lease found it. The update waits for a writer that
   * holds the chat's row without the lease (a background compaction's commit) and returns the
   * row as that writer left it, while the reads keep the snapshot from before it: then they
   * are of an earlier state, and the turn reads again.
   */
  current: boolean;
  /**
   * The chat holds a message (not a compaction's entry) after the one the request's `throughId`
   * names, the last the page showed: another tab went on meanwhile. False without one.
   */
  wentOn: boolean;
};

/**
 * `acquireTurnLeaseOnOwnChat` with what a new message's turn reads first, in the same
 * statement: one round trip where there were two. The reads share the update's snapshot, and
 * the update takes the lease only where that snapshot shows it free — its last holder's writes,
 * made before it freed the chat, are in the rows (unless `current` says otherwise).
 */
export async function acquireTurnLeaseWithHistory(
  db: Db,
  userId: string,
  chatId: string,
  leaseMs: number,
  read: { messageId: string; whole: boolean; throughId?: string },
): Promise<{ chat: Chat; lease: Lease; start: TurnStart } | null> {
  if (!UUID_PATTERN.test(chatId)) return null;
  const query = prepared(db, "acquire_turn_lease_with_history", (on, name) => {
    const taken = on.$with("taken").as(takeOwnTurnLease(on));
    // The summary's columns as the schema names them (only their writer spells them out).
    const unsummarized = sql`(coalesce(${taken.contextSummary}, '') = '' or ${taken.summaryWatermark} is null)`;
    const everyRow = sql`(${sql.placeholder("whole")}::boolean or ${unsummarized})`;
    // Every row, or, as loadTurnHistory: from turnStartSeq on, and every pinned message. One
    // branch each, gated by `everyRow` as a whole, so each finds its rows through its own
    // index: in one condition with it, every stored message of the chat was read (10,000
    // rows, 3-15 ms, for the 20 a turn sends).
    const rows = sql<
      KeyedMessage[]
    >`(with lo as (select ${turnStartSeq(sql`taken.id`, sql`${taken.summaryWatermark}`)} as seq)
      select coalesce(json_agg(json_build_object(
        'id', m.id, 'seq', m.seq, 'role', m.role, 'parts', m.parts, 'metadata', m.metadata,
        'contentKey', ${contentKeyOf("m")}) order by m.seq), '[]'::json)
      from (
        select a.id, a.seq, a.role, a.parts, a.metadata from ${message} a
        where a.chat_id = taken.id and ${everyRow}
        union all
        select s.id, s.seq, s.role, s.parts, s.metadata from ${message} s
        where s.chat_id = taken.id and not ${everyRow} and ${seqFrom(sql`s.seq`, sql`(select seq from lo)`)}
        union all
        select p.id, p.seq, p.role, p.parts, p.metadata from ${message} p
        where p.chat_id = taken.id and not ${everyRow} and p.metadata ->> 'pinned' = 'true'
          and ${seqFrom(sql`p.seq`, sql`(select seq from lo)`)} is not true
      ) m)`;
    const isNew = sql<boolean>`(not exists (select 1 from ${message} n where n.id = ${sql.placeholder("messageId")})
      and not ${heldByVersion(sql`${sql.placeholder("chatId")}::uuid`, sql`${sql.placeholder("messageId")}`)})`;
    const current = sql<boolean>`exists (select 1 from ${chat} c where c.id = taken.id
      and c.version = taken.version and c.history_version = taken.history_version
      and c.updated_at = taken.updated_at)`;
    const wentOn = wentOnPast(sql`taken.id`, sql`${sql.placeholder("throughId")}::text`);
    const start = on.$with("start").as(
      on
        .select({
          rows: rows.as("rows"),
          isNew: isNew.as("is_new"),
          current: current.as("current"),
          wentOn: wentOn.as("went_on"),
        })
        .from(taken),
    );
    return on.with(taken, start).select().from(taken).innerJoin(start, sql`true`).prepare(name);
  });
  const [row] = await query.execute({
    chatId,
    userId,
    leaseSeconds: leaseMs / 1000,
    messageId: read.messageId,
    whole: read.whole,
    throughId: read.throughId ?? null,
  });
  if (!row?.taken.activeTurnUntil) return null;
  return {
    chat: row.taken,
    lease: { chatId, until: row.taken.activeTurnUntil, kind: "turn" },
    start: row.start,
  };
}

/** Extends a lease its holder still owns; null when it was lost (expired and taken, or released). */
export async function renewLease(db: Db, lease: Lease, leaseMs: number): Promise<Lease | null> {
  const column = columnOf(lease.kind);
  const [row] = await setLease(db, lease.kind, until(leaseMs / 1000))
    .where(and(eq(chat.id, lease.chatId), eq(column, lease.until)))
    .returning({ until: column });
  return row?.until ? { ...lease, until: row.until } : null;
}

/** Frees a lease its holder still owns; false when the row holds someone else's (or none). */
export async function releaseLease(db: Db, lease: Lease): Promise<boolean> {
  // Prepared (per kind): every turn frees the chat's lease.
  const query = prepared(db, `release_${lease.kind}_lease`, (on, name) =>
    setLease(on, lease.kind, null)
      .where(
        and(
          eq(chat.id, sql.placeholder("chatId")),
          eq(columnOf(lease.kind), sql.placeholder("until")),
        ),
      )
      .returning({ id: chat.id })
      .prepare(name),
  );
  const rows = await query.execute({ chatId: lease.chatId, until: lease.until });
  return rows.length > 0;
}
