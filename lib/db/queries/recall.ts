import { and, eq, isNotNull, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { chat, type Message, message } from "../schema";

/**
 * What the `recall` tool reads (lib/chat/recall.ts): the messages of one chat that its summary
 * covers, the watermark and everything before it, and those after it whose copy in the model's
 * view is cut (the caller names them). The others are in the view as written; a chat with no
 * summary has none covered.
 */

export type RecalledRow = Pick<Message, "id" | "seq" | "role" | "parts">;

const recalledColumns = {
  id: message.id,
  seq: message.seq,
  role: message.role,
  parts: message.parts,
};

/** The last seq the chat's summary covers, or null when it has no summary (or a lost watermark). */
export async function coveredSeq(db: Db, chatId: string): Promise<number | null> {
  const [row] = await db
    .select({ seq: message.seq })
    .from(message)
    .innerJoin(chat, and(eq(chat.id, message.chatId), eq(chat.summaryWatermark, message.id)))
    .where(and(eq(chat.id, chatId), isNotNull(chat.contextSummary)));
  return row?.seq ?? null;
}

/** `text` as it appears inside the JSON text of a jsonb value (quotes and backslashes escaped). */
const asJsonText = (text: string) => JSON.stringify(text).slice(1, -1);
/** `text` matched literally by LIKE (its default escape is the backslash). */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Up to `limit` messages up to `coveredSeq` (what `coveredSeq()` read; -1 for none), and those
 * of `alsoIds`, whose stored parts contain any of `terms` (case-insensitive): those holding the
 * rarest of the terms first, then the newest. Each term weighs ln((n + 1) / k) for the n
 * reachable messages, k of which hold it (`weights`, in the order of `terms`): a word every
 * message of a long chat holds ("the", or "text", which every message's JSON holds as a key)
 * weighs about nothing, so a long chat's newest messages cannot crowd out the one old message that holds the
 * rare word asked for. A coarse filter: the caller scores what comes back on the text the model
 * would read, with the same weights.
 */
export async function coveredMessagesMatching(
  db: Db,
  chatId: string,
  {
    coveredSeq,
    alsoIds = [],
    terms,
    limit,
  }: { coveredSeq: number; alsoIds?: readonly string[]; terms: readonly string[]; limit: number },
): Promise<{ rows: RecalledRow[]; weights: number[] }> {
  if (terms.length === 0) return { rows: [], weights: [] };
  const patterns = terms.map((term) => `%${likeLiteral(asJsonText(term))}%`);
  const reachable =
    alsoIds.length > 0
      ? sql`(seq <= ${coveredSeq} or id in (${sql.join(
          alsoIds.map((id) => sql`${id}`),
          sql`, `,
        )}))`
      : sql`seq <= ${coveredSeq}`;
  const each = (make: (i: number) => SQL, separator = sql`, `) =>
    sql.join(
      patterns.map((_, i) => make(i)),
      separator,
    );
  const hit = (i: number) => sql.raw(`h${i}`);
  const held = (i: number) => sql.raw(`k${i}`);
  const weight = (i: number) => sql`ln((n + 1.0) / greatest(${held(i)}, 1))`;
  const result = await db.execute(sql`
    select id, seq, role, parts, ${each((i) => sql`${weight(i)} as ${sql.raw(`w${i}`)}`)}
    from (
      select *, count(*) over () as n, ${each((i) => sql`sum(${hit(i)}) over () as ${held(i)}`)}
      from (
        select id, seq, role, parts,
          ${each((i) => sql`(parts::text ilike ${patterns[i]})::int as ${hit(i)}`)}
        from ${message}
        where chat_id = ${chatId} and ${reachable}
      ) reachable
    ) counted
    where ${each(hit, sql` + `)} > 0
    order by ${each((i) => sql`${hit(i)} * ${weight(i)}`, sql` + `)} desc, seq desc
    limit ${limit}
  `);
  const rows = (result as unknown as { rows: Array<Record<string, unknown>> }).rows;
  const first = rows[0];
  return {
    rows: rows.map((row) => ({
      id: row.id as string,
      seq: Number(row.seq),
      role: row.role as RecalledRow["role"],
      parts: (typeof row.parts === "string"
        ? JSON.parse(row.parts)
        : row.parts) as RecalledRow["parts"],
    })),
    weights: patterns.map((_, i) => (first ? Number(first[`w${i}`]) : 1)),
  };
}

/** The chat's message at `seq`, with the last seq its summary covers (null: none covered). */
export async function messageAtSeq(
  db: Db,
  chatId: string,
  seq: number,
): Promise<{ row: RecalledRow | null; coveredSeq: number | null }> {
  const [covered, rows] = await Promise.all([
    coveredSeq(db, chatId),
    db
      .select(recalledColumns)
      .from(message)
      .where(and(eq(message.chatId, chatId), eq(message.seq, seq))),
  ]);
  return { row: rows[0] ?? null, coveredSeq: covered };
}
