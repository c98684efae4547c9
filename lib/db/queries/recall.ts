import { and, desc, eq, inArray, isNotNull, lte, or, sql } from "drizzle-orm";
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
 * The newest `limit` messages up to `coveredSeq` (what `coveredSeq()` read; -1 for none), and
 * those of `alsoIds`, whose stored parts contain any of `terms` (case-insensitive), newest
 * first. A coarse filter: the parts' JSON holds ids and types as well, so the caller scores what
 * comes back on the text the model would read.
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
): Promise<RecalledRow[]> {
  if (terms.length === 0) return [];
  const patterns = terms.map((term) => `%${likeLiteral(asJsonText(term))}%`);
  const reachable =
    alsoIds.length > 0
      ? or(lte(message.seq, coveredSeq), inArray(message.id, [...alsoIds]))
      : lte(message.seq, coveredSeq);
  return db
    .select(recalledColumns)
    .from(message)
    .where(
      and(
        eq(message.chatId, chatId),
        reachable,
        sql`${message.parts}::text ilike any(array[${sql.join(
          patterns.map((p) => sql`${p}`),
          sql`, `,
        )}]::text[])`,
      ),
    )
    .orderBy(desc(message.seq))
    .limit(limit);
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
