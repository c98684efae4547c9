import { and, desc, eq, inArray, isNull, or, type SQL, sql } from "drizzle-orm";
import { FOLDED_OUTCOMES } from "@/lib/compaction/trace";
import type { Db } from "../client";
import { type CompactionEvent, compactionEvent, message } from "../schema";
import { storableText } from "../storable";

export type NewCompactionEvent = Omit<
  typeof compactionEvent.$inferInsert,
  "id" | "createdAt" | "watermarkKey"
>;

/** A hash of the stored parts of the message `id` names, as they are now (null: no such row). */
const partsKeyOf = (id: SQL | string) =>
  sql<
    string | null
  >`(select encode(sha256(convert_to(${message.parts}::text, 'UTF8')), 'base64') from ${message} where ${message.id} = ${id})`;

export async function recordCompactionEvent(
  db: Db,
  event: NewCompactionEvent,
): Promise<CompactionEvent> {
  const [row] = await db
    .insert(compactionEvent)
    .values({
      ...event,
      // What the watermark message said when this summary was made.
      watermarkKey: event.watermarkTo ? partsKeyOf(event.watermarkTo) : null,
      summary: event.summary == null ? event.summary : storableText(event.summary),
      error: event.error == null ? event.error : storableText(event.error),
    })
    .returning();
  if (!row) throw new Error("insert into compaction_event returned no row");
  return row;
}

/**
 * What invalidation weighs of an event that wrote a summary or rolled one back, without the
 * summary's text (read by id, and only where needed: a chat folded thousands of times read every
 * summary whole). `current`: its watermark message still says what it said when the summary was
 * made — one edited in place since (same id, other text) is no rollback point: its summary tells
 * the old text, and the message as it is now would be neither summarized nor sent.
 * `hasSummary`: it holds a summary that is not empty.
 */
export type SummaryEventHead = Pick<
  CompactionEvent,
  "id" | "createdAt" | "reason" | "outcome" | "watermarkTo" | "error"
> & { current: boolean; hasSummary: boolean };

/** The chat's events that wrote a summary or rolled one back, newest first, without their text. */
export async function listSummaryEventHeads(db: Db, chatId: string): Promise<SummaryEventHead[]> {
  return db
    .select({
      id: compactionEvent.id,
      createdAt: compactionEvent.createdAt,
      reason: compactionEvent.reason,
      outcome: compactionEvent.outcome,
      watermarkTo: compactionEvent.watermarkTo,
      error: compactionEvent.error,
      current: sql<boolean>`coalesce(${compactionEvent.watermarkKey} is null
        or ${compactionEvent.watermarkKey} = ${partsKeyOf(sql`${compactionEvent.watermarkTo}`)}, false)`,
      hasSummary: sql<boolean>`coalesce(${compactionEvent.summary}, '') <> ''`,
    })
    .from(compactionEvent)
    .where(
      and(
        eq(compactionEvent.chatId, chatId),
        or(
          inArray(compactionEvent.outcome, [...FOLDED_OUTCOMES]),
          eq(compactionEvent.reason, "invalidated"),
        ),
      ),
    )
    .orderBy(desc(compactionEvent.createdAt), desc(compactionEvent.id));
}

/** The summaries of the chat's events `ids` (at most a few hundred), by id. */
export async function summariesOf(
  db: Db,
  chatId: string,
  ids: readonly string[],
): Promise<Map<string, string | null>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: compactionEvent.id, summary: compactionEvent.summary })
    .from(compactionEvent)
    .where(and(eq(compactionEvent.chatId, chatId), inArray(compactionEvent.id, [...ids])));
  return new Map(rows.map((row) => [row.id, row.summary]));
}

/** The reason of the chat's newest event; undefined when it has none. */
export async function latestCompactionReason(
  db: Db,
  chatId: string,
): Promise<CompactionEvent["reason"] | undefined> {
  const [row] = await db
    .select({ reason: compactionEvent.reason })
    .from(compactionEvent)
    .where(eq(compactionEvent.chatId, chatId))
    .orderBy(desc(compactionEvent.createdAt))
    .limit(1);
  return row?.reason;
}

/**
 * The newest event that wrote this summary with this watermark (what a chat's summary state was
 * made by), or undefined when none did.
 */
export async function summaryEventIdOf(
  db: Db,
  chatId: string,
  state: { summary: string; watermark: string | null },
): Promise<string | undefined> {
  const [row] = await db
    .select({ id: compactionEvent.id })
    .from(compactionEvent)
    .where(
      and(
        eq(compactionEvent.chatId, chatId),
        eq(compactionEvent.summary, state.summary),
        state.watermark === null
          ? isNull(compactionEvent.watermarkTo)
          : eq(compactionEvent.watermarkTo, state.watermark),
      ),
    )
    .orderBy(desc(compactionEvent.createdAt), desc(compactionEvent.id))
    .limit(1);
  return row?.id;
}

export async function listCompactionEvents(db: Db, chatId: string): Promise<CompactionEvent[]> {
  return db
    .select()
    .from(compactionEvent)
    .where(eq(compactionEvent.chatId, chatId))
    .orderBy(desc(compactionEvent.createdAt));
}
