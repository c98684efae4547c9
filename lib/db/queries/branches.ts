import { and, asc, eq, gte, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { inIdList } from "../id-list";
import {
  type ArchivedMessage,
  type Message,
  type MessageBranch,
  message,
  messageBranch,
} from "../schema";
import { storableJson } from "../storable";
import { insertMessageRows } from "./messages";

/** The messages first edited first (an anchor's id is random), each one's versions in order. */
const inWrittenOrder = () => [
  sql`min(${messageBranch.createdAt}) over (partition by ${messageBranch.anchorId})`,
  asc(messageBranch.anchorId),
  asc(messageBranch.position),
];

/**
 * Every version of every edited message in a chat, in the order they were written: the
 * messages first edited first (an anchor's id is random), each one's versions in order.
 */
export async function listBranches(db: Db, chatId: string): Promise<MessageBranch[]> {
  return db
    .select()
    .from(messageBranch)
    .where(eq(messageBranch.chatId, chatId))
    .orderBy(...inWrittenOrder());
}

/**
 * What the ‹ n/m › switches need of each version, in `listBranches`' order: not its archived
 * messages, only the parts its first one had (the anchor as it was then; null for the version
 * shown, whose row holds none). A turn regenerated 30 times read every archived tail whole.
 */
export type BranchHead = Pick<MessageBranch, "anchorId" | "position" | "active"> & {
  anchorPartsThen: unknown;
};

export async function listBranchHeads(db: Db, chatId: string): Promise<BranchHead[]> {
  return db
    .select({
      anchorId: messageBranch.anchorId,
      position: messageBranch.position,
      active: messageBranch.active,
      anchorPartsThen: sql<unknown>`${messageBranch.messages} -> 0 -> 'parts'`,
    })
    .from(messageBranch)
    .where(eq(messageBranch.chatId, chatId))
    .orderBy(...inWrittenOrder());
}

/**
 * What a ‹ n/m › switch needs of its message as the chat shows it: its parts, and the message
 * after it that is not a compaction's entry (the reply the switch may sit under), or null.
 */
export type ShownAnchor = { parts: unknown; next: { id: string; role: Message["role"] } | null };

/**
 * The shown anchors among `anchorIds`, by id (one the chat does not show now is missing): read
 * by id and place, not by reading the chat (every chat with versions read all of its messages
 * each time it was opened).
 */
export async function shownAnchors(
  db: Db,
  chatId: string,
  anchorIds: readonly string[],
): Promise<Map<string, ShownAnchor>> {
  if (anchorIds.length === 0) return new Map();
  const result = await db.execute(sql`
    select a.id, a.parts, n.id as next_id, n.role as next_role
    from ${message} a
    left join lateral (
      select m.id, m.role from ${message} m
      where m.chat_id = a.chat_id and m.seq > a.seq
        and m.metadata ->> 'compaction' is distinct from 'true'
      order by m.seq
      limit 1
    ) n on true
    where a.chat_id = ${chatId}::uuid and ${inIdList(sql`a.id`, anchorIds)}`);
  const rows = (
    result as unknown as {
      rows: Array<{ id: string; parts: unknown; next_id: string | null; next_role: string | null }>;
    }
  ).rows;
  return new Map(
    rows.map((row) => [
      row.id,
      {
        parts: row.parts,
        next:
          row.next_id === null ? null : { id: row.next_id, role: row.next_role as Message["role"] },
      },
    ]),
  );
}

/**
 * SQL: whether one of chat `chatId`'s versions holds message `messageId`, reading no other
 * chat's versions and no archived message whole, only the ids beside them (`message_ids`).
 * The CASE makes Postgres look at a row's chat before its ids: a scan's conditions run in the
 * order it likes, and it put the ids first, so every new message read the ids of every
 * version of every chat (out of line, so the table looks small enough to scan whole).
 */
export function heldByVersion(chatId: SQL, messageId: SQL): SQL<boolean> {
  return sql<boolean>`exists (select 1 from ${messageBranch} b where b.chat_id = ${chatId}
    and case when b.chat_id = ${chatId}
      then b.message_ids @> jsonb_build_array(${messageId}::text) else false end)`;
}

/**
 * Whether message `messageId` lives only in a version of the chat not shown now: kept in a
 * version's row, not among the stored messages (an edited message's own id is in both).
 */
export async function isOnlyInHiddenVersion(
  db: Db,
  chatId: string,
  messageId: string,
): Promise<boolean> {
  const result = await db.execute(
    sql`select (${heldByVersion(sql`${chatId}::uuid`, sql`${messageId}`)}
      and not exists (select 1 from ${message} where ${message.id} = ${messageId})) as hidden`,
  );
  const [row] = (result as unknown as { rows: Array<{ hidden: boolean }> }).rows;
  return row?.hidden === true;
}

/**
 * Where one edited message's versions stand, in order: each one's id, place and whether it is
 * shown, not the messages it keeps (an edit reads this before every archive; a turn regenerated
 * 30 times read every archived tail whole).
 */
export type BranchSlot = Pick<MessageBranch, "id" | "position" | "active">;

export async function branchSlotsOf(
  db: Db,
  chatId: string,
  anchorId: string,
): Promise<BranchSlot[]> {
  return db
    .select({
      id: messageBranch.id,
      position: messageBranch.position,
      active: messageBranch.active,
    })
    .from(messageBranch)
    .where(and(eq(messageBranch.chatId, chatId), eq(messageBranch.anchorId, anchorId)))
    .orderBy(asc(messageBranch.position));
}

/** One version of an edited message, with what it keeps; undefined when it has none there. */
export async function branchAt(
  db: Db,
  chatId: string,
  anchorId: string,
  position: number,
): Promise<MessageBranch | undefined> {
  const [row] = await db
    .select()
    .from(messageBranch)
    .where(
      and(
        eq(messageBranch.chatId, chatId),
        eq(messageBranch.anchorId, anchorId),
        eq(messageBranch.position, position),
      ),
    );
  return row;
}

export function archiveRows(rows: readonly Message[]): ArchivedMessage[] {
  return rows.map(({ id, role, parts, metadata, createdAt, seq }) => ({
    id,
    role,
    parts,
    metadata,
    createdAt: createdAt.toISOString(),
    seq,
  }));
}

/** Leaves a version: its messages and the compaction state it had go into its row. */
export async function archiveBranch(
  db: Db,
  branchId: string,
  input: { messages: ArchivedMessage[]; summary: string | null; watermark: string | null },
): Promise<void> {
  await db
    .update(messageBranch)
    .set({
      active: false,
      messages: input.messages,
      summary: input.summary,
      watermark: input.watermark,
    })
    .where(eq(messageBranch.id, branchId));
}

export async function insertBranch(
  db: Db,
  input: {
    chatId: string;
    anchorId: string;
    position: number;
    active: boolean;
    messages: ArchivedMessage[] | null;
    summary: string | null;
    watermark: string | null;
  },
): Promise<void> {
  await db.insert(messageBranch).values(input);
}

export async function activateBranch(db: Db, branchId: string): Promise<void> {
  await db
    .update(messageBranch)
    .set({ active: true, messages: null, summary: null, watermark: null })
    .where(eq(messageBranch.id, branchId));
}

/**
 * Replaces the messages from `fromSeq` on with an archived version's, in its order, each at the
 * place it had: the version's summary and recall number messages by place, and a gap its
 * history had (an entry kept where a reply was taken away) renumbered would shift every number
 * after it onto another message. A version archived without places is numbered on from
 * `fromSeq`.
 */
export async function replaceTail(
  db: Db,
  chatId: string,
  fromSeq: number,
  archived: readonly ArchivedMessage[],
): Promise<void> {
  await db.delete(message).where(and(eq(message.chatId, chatId), gte(message.seq, fromSeq)));
  const placed = archived.every(
    (row, i) =>
      row.seq !== undefined &&
      row.seq >= fromSeq &&
      (i === 0 || row.seq > (archived[i - 1]?.seq ?? 0)),
  );
  await insertMessageRows(
    db,
    archived.map((row, i) => ({
      id: row.id,
      chatId,
      seq: placed && row.seq !== undefined ? row.seq : fromSeq + i,
      role: row.role,
      parts: storableJson(row.parts),
      metadata: storableJson(row.metadata),
      createdAt: new Date(row.createdAt),
    })),
  );
}
