import { AsyncLocalStorage } from "node:async_hooks";
import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzleNodePg } from "drizzle-orm/node-postgres";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { Pool } from "pg";
import { env } from "@/lib/env";
import { databaseUnavailable } from "@/lib/errors";
import { log } from "@/lib/log";
import { migrateDatabase } from "./migrate";
import * as schema from "./schema";
import { isDatabaseUnavailable } from "./unavailable";

export type Schema = typeof schema;
/** The Drizzle API both drivers share. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export type Database =
  | { driver: "pg"; db: Db; pool: Pool; close: () => Promise<void> }
  | { driver: "pglite"; db: Db; client: PGlite; close: () => Promise<void> };

/** Connections per server instance: enough for concurrent turns, far below Postgres' default 100. */
const POOL_MAX = 20;
/** A server that does not answer a connect by then is down: the request gets a 503, not a hang. */
const POOL_CONNECT_TIMEOUT_MS = 5_000;
/**
 * Connections kept open however long the server is quiet: what a turn's start sends at once
 * (session, lease and history, limits) and the page's reads beside it. A user reads a reply
 * for longer than the pool keeps an idle connection (10 s), and a new one costs its first
 * statement ~30 ms (connecting, a new backend's catalog caches, the turn's statements prepared
 * and planned again) against ~0.6 ms on an open one.
 */
const POOL_MIN = 5;
/** How long a connection beyond POOL_MIN may sit idle before it is closed (pg's default). */
const POOL_IDLE_TIMEOUT_MS = 10_000;

/**
 * Opens a database: a `pg` Pool when a URL is given, otherwise embedded PGlite
 * in `pgliteDir` (`memory://` keeps it in memory). Does not migrate.
 */
export async function openDatabase(options: {
  url?: string;
  pgliteDir?: string;
  /** Tests only: how long a connection beyond the kept ones may sit idle. */
  idleTimeoutMs?: number;
}): Promise<Database> {
  if (options.url) {
    const pool = new Pool({
      connectionString: options.url,
      max: POOL_MAX,
      min: POOL_MIN,
      idleTimeoutMillis: options.idleTimeoutMs ?? POOL_IDLE_TIMEOUT_MS,
      connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS,
    });
    // An idle connection the server drops (a restart, a failover) is reported here; unheard, it
    // would crash the process. The pool replaces it on the next query.
    pool.on("error", (error) => log.warn({ err: error }, "database connection lost"));
    const db = drizzleNodePg(pool, { schema }) as unknown as Db;
    return { driver: "pg", db, pool, close: () => pool.end() };
  }
  const dir = options.pgliteDir ?? "memory://";
  if (!dir.startsWith("memory://")) mkdirSync(dir, { recursive: true });
  const client = await PGlite.create(dir);
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return { driver: "pglite", db, client, close: () => client.close() };
}

// Tests (and scripts) run code against a database of their own without
// touching the process-wide one.
const scoped = new AsyncLocalStorage<Database>();

export function withDatabase<T>(database: Database, fn: () => T): T {
  return scoped.run(database, fn);
}

// The process-wide database survives Next's dev-mode module reloads.
const holder = globalThis as unknown as { __foldDatabase?: Promise<Database> };

let invalidUrlReported = false;

async function openProcessDatabase(): Promise<Database> {
  const { databaseUrl, databaseUrlInvalid, pgliteDir } = env();
  if (databaseUrlInvalid) {
    // Never the embedded database instead: it would be empty, and its first account admin.
    const cause = new Error(
      "DATABASE_URL is set but is not a postgres:// URL (postgres://user:password@host:5432/database; percent-encode any @ : / ? # in the password); no database is opened",
    );
    if (!invalidUrlReported) log.error({ err: cause }, "DATABASE_URL is invalid");
    invalidUrlReported = true;
    throw databaseUnavailable(cause);
  }
  const database = await openDatabase({ url: databaseUrl, pgliteDir });
  try {
    await migrateDatabase(database);
  } catch (error) {
    await database.close().catch(() => {});
    // A server that does not answer yet (still starting, restarting, unreachable) is an outage
    // like one mid-run: 503 and retried, the next request opening and migrating it again.
    if (isDatabaseUnavailable(error, { fromDatabase: true })) throw databaseUnavailable(error);
    throw error;
  }
  return database;
}

/** The database for the current request: a scoped one in tests, else the process one, migrated. */
export async function getDatabase(): Promise<Database> {
  const inScope = scoped.getStore();
  if (inScope) return inScope;
  holder.__foldDatabase ??= openProcessDatabase().catch((error) => {
    holder.__foldDatabase = undefined;
    throw error;
  });
  return holder.__foldDatabase;
}

export async function getDb(): Promise<Db> {
  return (await getDatabase()).db;
}
