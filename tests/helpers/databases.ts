import pg from "pg";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type Database, openDatabase } from "@/lib/db/client";
import { migrateDatabase } from "@/lib/db/migrate";
import { ADMIN_URL, createPostgresDatabase } from "./postgres";

/**
 * Every integration test that touches the database runs on both drivers:
 * embedded PGlite (in memory) and a real Postgres server, each with a fresh
 * database per test file that is dropped afterwards.
 */

export const DRIVERS = ["pglite", "pg"] as const;
export type Driver = (typeof DRIVERS)[number];

const IN_CI = process.env.CI === "true";

async function probePostgres(): Promise<string | null> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query("select 1");
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const postgresProblem = await probePostgres();
if (postgresProblem) {
  const banner = `\n*** POSTGRES SUITES ${IN_CI ? "FAIL" : "SKIPPED"}: cannot reach ${ADMIN_URL} (${postgresProblem}). Set TEST_DATABASE_URL. ***\n`;
  console.warn(banner);
}

/** A fresh, empty database of the given driver (not migrated) and its disposal. */
export async function freshDatabase(
  driver: Driver,
): Promise<{ database: Database; dispose: () => Promise<void> }> {
  if (driver === "pglite") {
    const database = await openDatabase({ pgliteDir: "memory://" });
    return { database, dispose: () => database.close() };
  }
  const created = await createPostgresDatabase();
  const database = await openDatabase({ url: created.url });
  return {
    database,
    dispose: async () => {
      await database.close();
      await created.drop();
    },
  };
}

type Options = { migrate?: boolean };

/**
 * `describe` once per driver. `use()` returns that driver's database, fresh for
 * this file and migrated unless `{ migrate: false }`.
 */
export function describeEachDriver(
  name: string,
  body: (use: () => Database, driver: Driver) => void,
  options: Options = {},
): void {
  for (const driver of DRIVERS) {
    if (driver === "pg" && postgresProblem) {
      if (IN_CI) {
        describe(`${name} [pg]`, () => {
          it("needs a reachable Postgres server under CI", () => {
            throw new Error(`Postgres unreachable at ${ADMIN_URL}: ${postgresProblem}`);
          });
        });
      } else {
        describe.skip(`${name} [pg] — SKIPPED: Postgres unreachable (${postgresProblem})`, () => {
          body(() => {
            throw new Error("unreachable");
          }, driver);
        });
      }
      continue;
    }
    describe(`${name} [${driver}]`, () => {
      let current: { database: Database; dispose: () => Promise<void> } | undefined;
      beforeAll(async () => {
        current = await freshDatabase(driver);
        if (options.migrate !== false) await migrateDatabase(current.database);
      });
      afterAll(async () => {
        await current?.dispose();
      });
      body(() => {
        if (!current) throw new Error("database not ready");
        return current.database;
      }, driver);
    });
  }
}
