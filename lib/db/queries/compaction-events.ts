import { and, desc, eq, inArray, isNull, or, type SQL, sql } from "drizzle-orm";
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
 * Events that wrote a summary, newest first: the rollback points for invalidation. Not one whose
 * watermark message was edited in place since (same id, other text): its summary tells the old
 * text, and the message as it is now would be neither summarized nor sent.
 */
export async function listSummaryEvents(db: Db, chatId: string): Promise<CompactionEvent[]> {
  return db
    .select()
    .from(compactionEvent)
    .where(
      and(
        eq(compactionEvent.chatId, chatId),
        inArray(compactionEvent.outcome, ["summarized", "fallback"]),
        or(
          isNull(compactionEvent.watermarkKey),
          eq(compactionEvent.watermarkKey, partsKeyOf(sql`${compactionEvent.watermarkTo}`)),
        ),
      ),
    )
    .orderBy(desc(compactionEvent.createdAt), desc(compactionEvent.id));
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
