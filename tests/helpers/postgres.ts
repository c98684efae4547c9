import { randomBytes } from "node:crypto";
import pg from "pg";

/** The Postgres server tests create their databases on (trust auth on these machines). */
export const ADMIN_URL =
  process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
/** How long disposal waits for a closed pool's connections to leave the server. */
const DISCONNECT_WAIT_MS = 5_000;
const DISCONNECT_POLL_MS = 20;

/** A new, empty database on the test server: its URL, and how to drop it. */
export async function createPostgresDatabase(): Promise<{
  url: string;
  drop: () => Promise<void>;
}> {
  const name = `fold_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        // pg's Pool.end() resolves before the server has seen its connections go; a forced
        // drop in between kills them and the pool reports it as an unhandled error.
        const deadline = Date.now() + DISCONNECT_WAIT_MS;
        while (Date.now() < deadline) {
          const { rows } = await client.query<{ open: number }>(
            "SELECT count(*)::int AS open FROM pg_stat_activity WHERE datname = $1",
            [name],
          );
          if ((rows[0]?.open ?? 0) === 0) break;
          await new Promise((resolve) => setTimeout(resolve, DISCONNECT_POLL_MS));
        }
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
