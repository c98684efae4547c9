import { randomBytes } from "node:crypto";
import pg from "pg";
import { type Database, openDatabase } from "@/lib/db/client";
import { migrateDatabase } from "@/lib/db/migrate";

/**
 * A fresh, migrated database for one benchmark: a new database on the real Postgres server
 * (dropped on dispose), or in-memory PGlite when that server cannot be reached.
 * Import it only after setting process.env: it loads Fold modules.
 */

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const PROBE_TIMEOUT_MS = 3_000;

export type BenchDatabase = {
  database: Database;
  /** Which database the figures were measured on, for the printed notes. */
  label: string;
  dispose(): Promise<void>;
};

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({
    connectionString: ADMIN_URL,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
  });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export async function openBenchDatabase(): Promise<BenchDatabase> {
  const name = `fold_bench_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  let unreachable: string | undefined;
  try {
    await adminQuery(`CREATE DATABASE "${name}"`);
  } catch (error) {
    unreachable = error instanceof Error ? error.message : String(error);
  }
  if (unreachable !== undefined) {
    const database = await openDatabase({ pgliteDir: "memory://" });
    await migrateDatabase(database);
    return {
      database,
      label: `PGlite in memory (Postgres at ${new URL(ADMIN_URL).host} unreachable: ${unreachable})`,
      dispose: () => database.close(),
    };
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString() });
  const dispose = async () => {
    await database.close();
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  };
  try {
    await migrateDatabase(database);
  } catch (error) {
    await dispose();
    throw error;
  }
  return { database, label: `Postgres at ${url.host}`, dispose };
}
