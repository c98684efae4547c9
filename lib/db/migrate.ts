import path from "node:path";
import { sql } from "drizzle-orm";
import type { NodePgDatabase } from "drizzle-orm/node-postgres";
import { migrate as migrateNodePg } from "drizzle-orm/node-postgres/migrator";
import type { PgliteDatabase } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import type { Database } from "./client";

const MIGRATIONS_FOLDER = path.join(process.cwd(), "drizzle");
// Serializes migrations when several server instances start against one Postgres.
const MIGRATION_LOCK_KEY = 7_424_001;

/**
 * Applies every pending migration in `drizzle/` (or in `migrationsFolder`: a test's copy of
 * the earlier ones); safe to run again.
 */
export async function migrateDatabase(
  database: Database,
  migrationsFolder = MIGRATIONS_FOLDER,
): Promise<void> {
  if (database.driver === "pglite") {
    await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder });
    return;
  }
  const client = await database.pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    const { drizzle } = await import("drizzle-orm/node-postgres");
    const locked = drizzle(client) as NodePgDatabase;
    await migrateNodePg(locked, { migrationsFolder });
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]).catch(() => {});
    client.release();
  }
}

export async function pingDatabase(database: Database): Promise<void> {
  await database.db.execute(sql`select 1`);
}
