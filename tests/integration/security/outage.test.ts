import { createServer } from "node:net";
import { format } from "node:util";
import { afterAll, beforeAll, expect, it, vi } from "vitest";

// Logs on, captured: Fold's logger (the real configuration, written to `captured`) and the
// console, where a library that bypasses the logger would print.
const captured = vi.hoisted(() => {
  process.env.LOG_LEVEL = "debug";
  return [] as string[];
});
vi.mock("@/lib/log", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/log")>();
  const destination = { write: (line: string) => void captured.push(line) };
  return { ...actual, ...actual.createLogging({ level: "debug", destination }) };
});

import pg from "pg";
import { type Database, openDatabase, withDatabase } from "@/lib/db/client";
import { DATABASE_RETRY_AFTER_S } from "@/lib/errors";
import { type ApiRoute, apiRoutes, fillPath, paramsFor } from "../../helpers/api-routes";
import { PASSWORD, register } from "../../helpers/auth";
import { describeEachDriver } from "../../helpers/databases";
import { type Browser, ORIGIN } from "../../helpers/http";

const routes = await apiRoutes();

/** A port nothing listens on: a Postgres that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The same kind of database as `driver`, unreachable: a closed PGlite, or a pool at a closed port. */
async function downDatabase(driver: "pg" | "pglite"): Promise<Database> {
  if (driver === "pg")
    return openDatabase({ url: `postgres://postgres@127.0.0.1:${await closedPort()}/fold` });
  const database = await openDatabase({ pgliteDir: "memory://" });
  await database.close();
  return database;
}

/** One request per route and method, as Fold's own page would send it. */
function requestsFor(route: ApiRoute, method: string, cookie: string, chatId: string) {
  const auth = route.betterAuth ? (method === "GET" ? "get-session" : "sign-in/email") : undefined;
  const values: Record<string, string> = { id: chatId, "...all": auth ?? "" };
  const body =
    method === "GET" || method === "DELETE"
      ? undefined
      : JSON.stringify(
          auth
            ? { email: "outage@example.com", password: PASSWORD }
            : { title: "x", trigger: "submit-message", chatId },
        );
  return new Request(`${ORIGIN}${fillPath(route.pattern, values)}`, {
    method,
    headers: { origin: ORIGIN, cookie, "content-type": "application/json" },
    body,
  });
}

describeEachDriver(
  "database outage: every route answers 503 and no secret reaches the logs",
  (use, driver) => {
    let browser: Browser;
    let down: Database;

    beforeAll(async () => {
      browser = (await register(use(), "outage@example.com")).browser;
      down = await downDatabase(driver);
    });
    afterAll(async () => {
      if (driver === "pg") await down.close();
    });

    it("answers 503 unavailable:database with Retry-After on every route and method", async () => {
      captured.length = 0;
      const chatId = crypto.randomUUID();
      const answers: Array<{
        endpoint: string;
        status: number;
        code?: string;
        retryAfter: string | null;
        text: string;
      }> = [];
      for (const route of routes) {
        for (const [method, handler] of Object.entries(route.handlers)) {
          if (method === "HEAD" || method === "OPTIONS") continue;
          const request = requestsFor(route, method, browser.cookie, chatId);
          const values = {
            id: chatId,
            "...all": new URL(request.url).pathname.replace("/api/auth/", ""),
          };
          const response = await withDatabase(down, () =>
            handler(request, { params: Promise.resolve(paramsFor(route.pattern, values)) }),
          );
          const text = await response.text();
          const code = (JSON.parse(text || "{}") as { error?: { code?: string } }).error?.code;
          answers.push({
            endpoint: `${method} ${route.pattern}`,
            status: response.status,
            code,
            retryAfter: response.headers.get("retry-after"),
            text,
          });
        }
      }
      expect(answers.length).toBeGreaterThanOrEqual(10);
      for (const answer of answers) {
        expect(answer, answer.endpoint).toMatchObject({
          status: 503,
          code: "unavailable:database",
          retryAfter: String(DATABASE_RETRY_AFTER_S),
        });
        // What the user reads is ours: no driver text, no SQL.
        expect(answer.text, answer.endpoint).not.toMatch(
          /ECONNREFUSED|PGlite is closed|Failed query|select /i,
        );
      }
    });

    it("keeps the session token, the password and SQL parameters out of every log line", async () => {
      const consoleLines: string[] = [];
      const spies = (["log", "info", "warn", "error", "debug"] as const).map((level) =>
        vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
          consoleLines.push(format(...args));
        }),
      );
      captured.length = 0;
      try {
        const chatsRoute = routes.find((r) => r.pattern === "/api/chats");
        const authRoute = routes.find((r) => r.betterAuth);
        for (let i = 0; i < 3; i++) {
          for (const [route, method] of [
            [chatsRoute, "GET"],
            [chatsRoute, "POST"],
            [authRoute, "GET"],
            [authRoute, "POST"],
          ] as const) {
            const handler = route?.handlers[method];
            if (!route || !handler) throw new Error(`no ${method} ${route?.pattern}`);
            const request = requestsFor(route, method, browser.cookie, crypto.randomUUID());
            const all = new URL(request.url).pathname.replace("/api/auth/", "");
            await withDatabase(down, () =>
              handler(request, {
                params: Promise.resolve(paramsFor(route.pattern, { "...all": all })),
              }),
            );
          }
        }
      } finally {
        for (const spy of spies) spy.mockRestore();
      }
      const logs = [...captured, ...consoleLines].join("\n");
      // The capture works: the outage itself was logged, with the query that failed.
      expect(logs).toMatch(/database unavailable/);
      const cookieValue = decodeURIComponent(browser.cookie.split("=").slice(1).join("="));
      const token = cookieValue.split(".")[0] ?? "";
      expect(token.length).toBeGreaterThan(10);
      expect(logs).not.toContain(token);
      expect(logs).not.toContain(PASSWORD);
      expect(logs).not.toMatch(/params: (?!\[redacted\])/);
    });

    it.runIf(driver === "pg")(
      "survives the server dropping its connections, and the pool reconnects by itself",
      async () => {
        const database = use();
        if (database.driver !== "pg") throw new Error("pg only");
        // An idle connection in the pool, then the server ends it (as a restart does).
        await database.pool.query("select 1");
        const { database: name } = database.pool.options as { database?: string };
        const admin = new pg.Client({
          connectionString:
            process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
        });
        await admin.connect();
        try {
          const target =
            name ?? new URL(String(database.pool.options.connectionString)).pathname.slice(1);
          await admin.query(
            "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
            [target],
          );
        } finally {
          await admin.end();
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(captured.join("\n")).toMatch(/database connection lost/);
        const { rows } = await database.pool.query<{ ok: number }>("select 1 as ok");
        expect(rows).toEqual([{ ok: 1 }]);
      },
    );
  },
);
