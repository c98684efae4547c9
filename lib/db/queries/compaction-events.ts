import { and, desc, eq, inArray } from "drizzle-orm";
import type { Db } from "../client";
import { type CompactionEvent, compactionEvent } from "../schema";
import { storableText } from "../storable";

export type NewCompactionEvent = Omit<typeof compactionEvent.$inferInsert, "id" | "createdAt">;

export async function recordCompactionEvent(
  db: Db,
  event: NewCompactionEvent,
): Promise<CompactionEvent> {
  const [row] = await db
    .insert(compactionEvent)
    .values({
      ...event,
      summary: event.summary == null ? event.summary : storableText(event.summary),
      error: event.error == null ? event.error : storableText(event.error),
    })
    .returning();
  if (!row) throw new Error("insert into compaction_event returned no row");
  return row;
}

/** Events that wrote a summary, newest first: the rollback points for invalidation. */
export async function listSummaryEvents(db: Db, chatId: string): Promise<CompactionEvent[]> {
  return db
    .select()
    .from(compactionEvent)
    .where(
      and(
        eq(compactionEvent.chatId, chatId),
        inArray(compactionEvent.outcome, ["summarized", "fallback"]),
      ),
    )
    .orderBy(desc(compactionEvent.createdAt), desc(compactionEvent.id));
}

export async function listCompactionEvents(db: Db, chatId: string): Promise<CompactionEvent[]> {
  return db
    .select()
    .from(compactionEvent)
    .where(eq(compactionEvent.chatId, chatId))
    .orderBy(desc(compactionEvent.createdAt));
}
