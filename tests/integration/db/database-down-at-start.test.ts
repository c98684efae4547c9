import net from "node:net";
import { sql } from "drizzle-orm";
import { afterEach, expect, it, vi } from "vitest";
import { describeEachDriver } from "../../helpers/databases";
import { createPostgresDatabase } from "../../helpers/postgres";

/**
 * A Postgres that is not up yet when Fold starts (a container still booting, both restarted
 * at once). Next keeps a failed start for the life of the process: had it failed, every
 * request after it — the health check too — would be a bare 500, even once the database is
 * back. The start goes on; requests answer 503 with Retry-After; once Postgres answers, the
 * next request opens the database and migrates it.
 */

vi.mock("@/lib/limits/peer-address", () => ({ installPeerAddressStamp: () => undefined }));

const { NEXT_RUNTIME: runtime, DATABASE_URL: databaseUrl } = process.env;
afterEach(() => {
  process.env.NEXT_RUNTIME = runtime;
  if (databaseUrl === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = databaseUrl;
});

/** A port nothing listens on (taken from the system, then given back). */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Postgres coming up on `port`: a plain TCP forward to the test server. */
async function forward(port: number, target: URL): Promise<() => Promise<void>> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket)).on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
}

describeEachDriver(
  "the server's start while Postgres is down",
  (_use, driver) => {
    it.runIf(driver === "pg")(
      "starts anyway, answers 503 with Retry-After, and opens and migrates the database once it is up",
      async () => {
        const created = await createPostgresDatabase();
        const target = new URL(created.url);
        const port = await freePort();
        process.env.DATABASE_URL = `postgres://${target.username}@127.0.0.1:${port}${target.pathname}`;
        process.env.NEXT_RUNTIME = "nodejs";
        // Fold's modules afresh: the environment is read with this DATABASE_URL.
        vi.resetModules();
        const { register } = await import("@/instrumentation");
        const health = await import("@/app/api/health/route");
        const { getDatabase } = await import("@/lib/db/client");
        let stop: (() => Promise<void>) | undefined;
        try {
          await expect(register()).resolves.toBeUndefined();
          const down = await health.GET();
          expect(down.status).toBe(503);
          expect(Number(down.headers.get("retry-after"))).toBeGreaterThan(0);

          stop = await forward(port, target);
          const up = await health.GET();
          expect(up.status).toBe(200);
          const database = await getDatabase();
          const tables = await database.db.execute(
            sql`select count(*)::int as n from information_schema.tables where table_name = 'chat'`,
          );
          expect((tables as unknown as { rows: Array<{ n: number }> }).rows[0]?.n).toBe(1);
          await database.close();
        } finally {
          await stop?.();
          await created.drop();
        }
      },
    );
  },
  { migrate: false },
);
