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
export function whileInsertsRefused(
  db: Db,
  table: string,
  when: string,
  during: () => Promise<void>,
  { afterMs = 0 }: { afterMs?: number } = {},
): Promise<void> {
  return withInsertTrigger(
    db,
    table,
    `if ${when} then
      perform pg_sleep(${afterMs / 1000});
      raise exception 'store unavailable';
    end if;`,
    during,
  );
}

/**
 * Runs `during` while every insert into `table` whose new row matches `when` takes `ms` longer
 * (a slow store). Postgres only: on PGlite the wait would hold up every other statement too.
 */
export function whileInsertsSlowed(
  db: Db,
  table: string,
  when: string,
  ms: number,
  during: () => Promise<void>,
): Promise<void> {
  return withInsertTrigger(
    db,
    table,
    `if ${when} then perform pg_sleep(${ms / 1000}); end if;`,
    during,
  );
}

/** Runs `during` with `body` (PL/pgSQL, on `new`) run before each insert into `table`. */
async function withInsertTrigger(
  db: Db,
  table: string,
  body: string,
  during: () => Promise<void>,
): Promise<void> {
  await db.execute(
    sql.raw(`create function before_insert_hook() returns trigger language plpgsql as $$
      begin
        ${body}
        return new;
      end $$`),
  );
  await db.execute(
    sql.raw(`create trigger before_insert_hook before insert on "${table}"
      for each row execute function before_insert_hook()`),
  );
  try {
    await during();
  } finally {
    await db.execute(sql.raw(`drop trigger before_insert_hook on "${table}"`));
    await db.execute(sql.raw("drop function before_insert_hook()"));
  }
}

/**
 * Runs `during` while each transaction that writes a row of `table` takes `ms` longer to commit,
 * after all it read and wrote: a transaction racing it still reads the table as it was, as one
 * can when the timing is unlucky, on every run. Postgres only: on PGlite the wait would hold up
 * every other statement too.
 */
export async function whileCommitsSlowed<T>(
  db: Db,
  table: string,
  ms: number,
  during: () => Promise<T>,
): Promise<T> {
  await db.execute(
    sql.raw(`create function slow_commit_hook() returns trigger language plpgsql as $$
      begin
        perform pg_sleep(${ms / 1000});
        return null;
      end $$`),
  );
  // A deferred constraint trigger runs at commit, once the transaction's own statements are done.
  await db.execute(
    sql.raw(`create constraint trigger slow_commit_hook after insert or update or delete
      on "${table}" deferrable initially deferred
      for each row execute function slow_commit_hook()`),
  );
  try {
    return await during();
  } finally {
    await db.execute(sql.raw(`drop trigger slow_commit_hook on "${table}"`));
    await db.execute(sql.raw("drop function slow_commit_hook()"));
  }
}
