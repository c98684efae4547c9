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
/**
 * pg's Pool.end() resolves once it has told its connections to close, not once the server has
 * seen them go; a DROP ... WITH (FORCE) in between kills them, and the pool throws that as an
 * unhandled 'error'. Dispose waits up to this long for the server to see them gone.
 */
const DISCONNECT_WAIT_MS = 5_000;
const DISCONNECT_POLL_MS = 20;

export type BenchDatabase = {
  database: Database;
  /** Which database the figures were measured on, for the printed notes. */
  label: string;
  /** Its connection URL, for a server process of its own; none for in-memory PGlite. */
  url?: string;
  dispose(): Promise<void>;
};

async function adminQuery(text: string, values: unknown[] = []): Promise<unknown[]> {
  const client = new pg.Client({
    connectionString: ADMIN_URL,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
  });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Waits (bounded) until the server has no connection left to database `name`. */
async function waitForDisconnect(name: string): Promise<void> {
  const deadline = Date.now() + DISCONNECT_WAIT_MS;
  while (Date.now() < deadline) {
    const [row] = (await adminQuery(
      "SELECT count(*)::int AS open FROM pg_stat_activity WHERE datname = $1",
      [name],
    )) as Array<{ open: number }>;
    if (!row || row.open === 0) return;
    await new Promise((resolve) => setTimeout(resolve, DISCONNECT_POLL_MS));
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
    await waitForDisconnect(name);
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  };
  try {
    await migrateDatabase(database);
  } catch (error) {
    await dispose();
    throw error;
  }
  return { database, label: `Postgres at ${url.host}`, url: url.toString(), dispose };
}
