import { and, eq, isNotNull, type SQL, sql } from "drizzle-orm";
import { COMPACTION_TRACE_TOOL_NAME } from "@/lib/message/ui-message";
import { unstorableReason } from "@/lib/message/unstorable-text";
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

/** A candidate with the text recall searched in it (`searchedText`), for the caller to score. */
export type MatchedRow = RecalledRow & { searched: string };

/** `text` matched literally by LIKE (its default escape is the backslash). */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A message's own parts (jsonpath): each part, and each part of a steering message. */
const OWN_PARTS = [
  "$[*]",
  '$[*] ? (@.type == "steering-message" && @.parts.type() == "array").parts[*]',
];
/** A tool call the model reads (lib/compaction/serialize.ts): not the trace, not one streaming. */
const TOOL_CALL = `(@.type starts with "tool-" || @.type == "dynamic-tool")
  && @.type != "tool-${COMPACTION_TRACE_TOOL_NAME}"
  && !(@.type == "dynamic-tool" && @.toolName == "${COMPACTION_TRACE_TOOL_NAME}")
  && @.state != "input-streaming"`;
/** Every string and number inside a value (a tool's arguments or output), its keys aside. */
const VALUES = '.** ? (@.type() == "string" || @.type() == "number")';

/**
 * What recall searches of a part: a filter and accessor (jsonpath, strict; `exists` keeps a
 * missing field from failing the query) after each of OWN_PARTS, and how many characters of
 * what it finds to drop (a static tool's name is its part's type after "tool-").
 */
const SEARCHED_FIELDS: ReadonlyArray<{ path: string; drop?: number }> = [
  { path: '? (@.type == "text" && exists(@.text)).text' },
  { path: '? (@.type == "file" && exists(@.filename)).filename' },
  { path: '? (@.type == "file" && exists(@.mediaType)).mediaType' },
  { path: '? (@.type == "file" && exists(@.url)).url ? (!(@ starts with "data:"))' },
  { path: `? (${TOOL_CALL} && @.type starts with "tool-").type`, drop: "tool-".length },
  { path: `? (${TOOL_CALL} && @.type == "dynamic-tool" && exists(@.toolName)).toolName` },
  { path: `? (${TOOL_CALL} && exists(@.input)).input${VALUES}` },
  { path: `? (${TOOL_CALL} && exists(@.output)).output${VALUES}` },
  { path: `? (${TOOL_CALL} && exists(@.errorText)).errorText` },
  { path: `? (${TOOL_CALL} && exists(@.approval.reason)).approval.reason` },
];

/**
 * What recall searches in a message: the words a reader would look for, one a line (grouped by
 * field, not in the parts' order). The text parts (a steering message's too); a file's name,
 * media type and address, never its data; each tool call's name, the values in its arguments
 * and output, its error and a denial's reason. Not the reasoning, which the model never reads
 * back (lib/compaction/serialize.ts, lib/context/count-units.ts), nor the JSON that holds it
 * all: keys, part types, call ids, provider metadata, an image's base64. Each path reads only
 * its fields, so no part's data is copied or scanned; the filter matches each term against this
 * text, and the caller scores the same text (lib/chat/recall.ts).
 */
const searchedText = sql`(
  select coalesce(string_agg(field, E'\n'), '')
  from (${sql.join(
    OWN_PARTS.flatMap((part) =>
      SEARCHED_FIELDS.map(
        ({ path, drop = 0 }) =>
          sql`select substr(found #>> '{}', ${sql.raw(String(drop + 1))})
            from jsonb_path_query(${message.parts}, ${`strict ${part} ${path}`}::jsonpath) found`,
      ),
    ),
    sql` union all `,
  )}) as fields(field)
  where field <> ''
)`;

/**
 * Up to `limit` messages up to `coveredSeq` (what `coveredSeq()` read; -1 for none), and those
 * of `alsoIds`, whose searched text (`searchedText`) holds any of `terms` (case-insensitive):
 * those holding the rarest of the terms first, then the newest. Each term weighs ln((n + 1) / k)
 * for the n reachable messages, k of which hold it (`weights`, in the order of `terms`): a word
 * every message of a long chat holds ("the") weighs about nothing, so a long chat's newest
 * messages cannot crowd out the one old message that holds the rare word asked for. The caller
 * scores what comes back on the same text, with the same weights.
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
): Promise<{ rows: MatchedRow[]; weights: number[] }> {
  if (terms.length === 0) return { rows: [], weights: [] };
  const reachable =
    alsoIds.length > 0
      ? sql`(seq <= ${coveredSeq} or id in (${sql.join(
          alsoIds.map((id) => sql`${id}`),
          sql`, `,
        )}))`
      : sql`seq <= ${coveredSeq}`;
  const each = (make: (i: number) => SQL, separator = sql`, `) =>
    sql.join(
      terms.map((_, i) => make(i)),
      separator,
    );
  // Stored text never holds what Postgres cannot store (a NUL, a lone surrogate): such a term
  // matches nothing, and a NUL could not even be sent as a parameter.
  const matches = (i: number) =>
    unstorableReason(terms[i] ?? "") === null
      ? sql`(searched ilike ${`%${likeLiteral(terms[i] ?? "")}%`})::int`
      : sql`0`;
  const hit = (i: number) => sql.raw(`h${i}`);
  const held = (i: number) => sql.raw(`k${i}`);
  const weight = (i: number) => sql`ln((n + 1.0) / greatest(${held(i)}, 1))`;
  // The searched text comes from an aggregate, so it is built once a message, not once a term.
  const result = await db.execute(sql`
    select id, seq, role, parts, searched, ${each((i) => sql`${weight(i)} as ${sql.raw(`w${i}`)}`)}
    from (
      select *, count(*) over () as n, ${each((i) => sql`sum(${hit(i)}) over () as ${held(i)}`)}
      from (
        select id, seq, role, parts, searched, ${each((i) => sql`${matches(i)} as ${hit(i)}`)}
        from ${message} cross join lateral ${searchedText} as readable(searched)
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
      searched: row.searched as string,
    })),
    weights: terms.map((_, i) => (first ? Number(first[`w${i}`]) : 1)),
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
