import type { SQL } from "drizzle-orm";
import { eq, sql } from "drizzle-orm";
import type { Db } from "@/lib/db/client";
import { chat } from "@/lib/db/schema";

/** Whether a turn (or compact-now) still holds the chat's lease: tests wait for it to end. */
export function isTurnActive(db: Db, chatId: string): Promise<boolean> {
  return leaseLive(db, chatId, chat.activeTurnUntil);
}

/** Whether a background compaction holds the chat's compaction lease right now. */
export function isCompactingNow(db: Db, chatId: string): Promise<boolean> {
  return leaseLive(db, chatId, chat.compactionUntil);
}

async function leaseLive(
  db: Db,
  chatId: string,
  until: typeof chat.activeTurnUntil | typeof chat.compactionUntil,
) {
  const [row] = await db
    .select({ active: sql<boolean>`${until} is not null and ${until} > now()` })
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

/**
 * Runs `during` while the database refuses every insert into `table` whose new row matches
 * `when` (an SQL condition on `new`), as a store failing between two writes would; with
 * `afterMs`, only after that long (a store that hangs, then fails). The refusal is lifted
 * after, whatever happened.
 */
export async function whileInsertsRefused(
  db: Db,
  table: string,
  when: string,
  during: () => Promise<void>,
  { afterMs = 0 }: { afterMs?: number } = {},
): Promise<void> {
  await db.execute(
    sql.raw(`create function refuse_insert() returns trigger language plpgsql as $$
      begin
        if ${when} then
          perform pg_sleep(${afterMs / 1000});
          raise exception 'store unavailable';
        end if;
        return new;
      end $$`),
  );
  await db.execute(
    sql.raw(`create trigger refuse_insert before insert on "${table}"
      for each row execute function refuse_insert()`),
  );
  try {
    await during();
  } finally {
    await db.execute(sql.raw(`drop trigger refuse_insert on "${table}"`));
    await db.execute(sql.raw("drop function refuse_insert()"));
  }
}
