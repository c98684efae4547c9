import type { SQL } from "drizzle-orm";
import { eq, sql } from "drizzle-orm";
import type { Db } from "@/lib/db/client";
import { chat } from "@/lib/db/schema";

/** Whether a turn (or compaction) still holds the chat's lease: tests wait for it to end. */
export async function isTurnActive(db: Db, chatId: string): Promise<boolean> {
  const [row] = await db
    .select({
      active: sql<boolean>`${chat.activeTurnUntil} is not null and ${chat.activeTurnUntil} > now()`,
    })
    .from(chat)
    .where(eq(chat.id, chatId));
  return row?.active ?? false;
}

/** Whether a background compaction holds the chat's compaction lease right now. */
export async function isCompactingNow(db: Db, chatId: string): Promise<boolean> {
  const [row] = await db
    .select({
      active: sql<boolean>`${chat.compactionUntil} is not null and ${chat.compactionUntil} > now()`,
    })
    .from(chat)
    .where(eq(chat.id, chatId));
  return row?.active ?? false;
}

/** Until the chat's background compaction (if any) has finished and freed its lease. */
export async function compactionSettled(db: Db, chatId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (await isCompactingNow(db, chatId)) {
    if (Date.now() > deadline) throw new Error("the background compaction did not finish");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Raw rows of a query, whichever driver runs it. */
export async function queryRows<T>(db: Db, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}
