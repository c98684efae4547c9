import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import fc from "fast-check";
import { type Database, withDatabase } from "@/lib/db/client";
import { chat, user } from "@/lib/db/schema";
import { type ApiRoute, fillPath, paramsFor } from "./api-routes";
import { register } from "./auth";
import { isTurnActive } from "./db";
import { type BodySpec, bodyFor, paramValue, queryParams, TEMPLATES, TOKENS } from "./fuzz-bodies";
import { type Browser, ORIGIN } from "./http";
import { contentFingerprint } from "./security";
import { eventually } from "./ui-stream";

/**
 * The API fuzz shared by the security suite and `npm run bench -- --only security`: every
 * endpoint under app/api gets generated requests — broken bodies, hostile text, odd path
 * and query parameters — from a signed-in admin on Fold's own origin (so they reach the
 * handlers), and every answer must be below 500, with nothing written when it is a refusal.
 */

type Handler = (request: Request, context: { params: Promise<unknown> }) => Promise<Response>;

export type FuzzTarget = { key: string; route: ApiRoute; method: string; handler: Handler };

export type FuzzFixtures = {
  database: Database;
  admin: Browser;
  chatId: string;
  otherChatId: string;
  victimId: string;
  modelId: string;
};

export type FuzzCase = {
  params: Record<string, string>;
  query: Record<string, string>;
  body: BodySpec;
};

export type FuzzFailure = { key: string; status: number; wrote: boolean; input: FuzzCase };

export type FuzzReport = {
  cases: number;
  fiveXx: number;
  partialWrites: number;
  /** How many answers had each status: shows the cases reached the handlers, not just the gate. */
  statuses: Record<number, number>;
  failures: FuzzFailure[];
};

const FUZZED_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
/** Failures kept for the report; the counts cover all of them. */
const MAX_FAILURES_KEPT = 20;

export function fuzzTargets(routes: readonly ApiRoute[]): FuzzTarget[] {
  return routes.flatMap((route) =>
    FUZZED_METHODS.filter((method) => route.handlers[method]).map((method) => ({
      key: `${method} ${route.pattern}`,
      route,
      method,
      handler: route.handlers[method] as Handler,
    })),
  );
}

async function newChat(database: Database, userId: string): Promise<string> {
  const [row] = await database.db.insert(chat).values({ userId, title: "fuzz" }).returning();
  if (!row) throw new Error("could not create a fixture chat");
  return row.id;
}

/** An admin (the first account) with a chat, and another user's chat to reach for. */
export async function fuzzFixtures(database: Database, modelId: string): Promise<FuzzFixtures> {
  const admin = (await register(database, "fuzz-admin@example.com")).browser;
  await register(database, "fuzz-victim@example.com");
  const rows = await database.db.select({ id: user.id, email: user.email }).from(user);
  const adminId = rows.find((r) => r.email === "fuzz-admin@example.com")?.id;
  const victimId = rows.find((r) => r.email === "fuzz-victim@example.com")?.id;
  if (!adminId || !victimId) throw new Error("fixture users missing");
  return {
    database,
    admin,
    chatId: await newChat(database, adminId),
    otherChatId: await newChat(database, victimId),
    victimId,
    modelId,
  };
}

export function caseArbitrary(target: FuzzTarget): fc.Arbitrary<FuzzCase> {
  const params = fc.record(
    Object.fromEntries(target.route.params.map((name) => [name, paramValue(name)])),
  ) as fc.Arbitrary<Record<string, string>>;
  const body: fc.Arbitrary<BodySpec> =
    target.method === "GET" ? fc.constant({ kind: "none" }) : bodyFor(TEMPLATES[target.key]);
  return fc.record({ params, query: queryParams, body });
}

/** Replaces `$tokens` (in strings, deeply) with the fixtures of this moment. */
function resolve(value: unknown, fixtures: FuzzFixtures): unknown {
  if (typeof value === "string") {
    switch (value) {
      case TOKENS.chat:
        return fixtures.chatId;
      case TOKENS.otherChat:
        return fixtures.otherChatId;
      case TOKENS.victim:
        return fixtures.victimId;
      case TOKENS.random:
        return randomUUID();
      case TOKENS.fresh:
        return `fuzz-${randomUUID()}`;
      case TOKENS.model:
        return fixtures.modelId;
      default:
        return value;
    }
  }
  if (Array.isArray(value)) return value.map((item) => resolve(item, fixtures));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, fixtures)]));
  }
  return value;
}

function encodeBody(body: BodySpec, fixtures: FuzzFixtures): BodyInit | undefined {
  if (body.kind === "none") return undefined;
  if (body.kind === "text") return body.text;
  if (body.kind === "bytes") return new Uint8Array(body.bytes);
  return JSON.stringify(resolve(body.value, fixtures)) ?? "null";
}

/** Sends one case; a refusal must leave the content tables as they were. */
export async function runCase(
  fixtures: FuzzFixtures,
  target: FuzzTarget,
  input: FuzzCase,
): Promise<{ status: number; wrote: boolean }> {
  const { database } = fixtures;
  const values = resolve(input.params, fixtures) as Record<string, string>;
  const query = new URLSearchParams(resolve(input.query, fixtures) as Record<string, string>);
  const url = `${ORIGIN}${fillPath(target.route.pattern, values)}${query.size ? `?${query}` : ""}`;
  const headers = new Headers({ origin: ORIGIN });
  // better-auth's routes are fuzzed signed out: a fuzzed sign-out must not end the admin's session.
  if (!target.route.betterAuth) headers.set("cookie", fixtures.admin.cookie);
  if (target.method !== "GET") headers.set("content-type", "application/json");
  const request = new Request(url, {
    method: target.method,
    headers,
    body: target.method === "GET" ? undefined : encodeBody(input.body, fixtures),
  });

  const before = await contentFingerprint(database);
  const response = await withDatabase(database, () =>
    target.handler(request, { params: Promise.resolve(paramsFor(target.route.pattern, values)) }),
  );
  await response.arrayBuffer(); // a turn's stream runs to its end
  if (response.ok && target.key === "POST /api/chat") {
    await eventually(async () => !(await isTurnActive(database.db, fixtures.chatId)), 30_000);
  }
  const wrote = response.status >= 400 && (await contentFingerprint(database)) !== before;
  if (response.ok && target.method === "DELETE") await replaceDeleted(fixtures);
  return { status: response.status, wrote };
}

/** A fuzzed DELETE that succeeded took a fixture with it: make a new one. */
async function replaceDeleted(fixtures: FuzzFixtures): Promise<void> {
  const { db } = fixtures.database;
  const [own] = await db
    .select({ userId: chat.userId })
    .from(chat)
    .where(eq(chat.id, fixtures.chatId));
  if (!own) {
    const [admin] = await db
      .select({ id: user.id })
      .from(user)
      .where(eq(user.email, "fuzz-admin@example.com"));
    if (admin) fixtures.chatId = await newChat(fixtures.database, admin.id);
  }
}

/** `casesPerTarget` generated cases for each target, reproducible from `seed`. */
export async function runFuzz(
  fixtures: FuzzFixtures,
  targets: readonly FuzzTarget[],
  options: { casesPerTarget: number; seed: number },
): Promise<FuzzReport> {
  const report: FuzzReport = { cases: 0, fiveXx: 0, partialWrites: 0, statuses: {}, failures: [] };
  for (const [index, target] of targets.entries()) {
    const cases = fc.sample(caseArbitrary(target), {
      numRuns: options.casesPerTarget,
      seed: options.seed + index,
    });
    for (const input of cases) {
      const { status, wrote } = await runCase(fixtures, target, input);
      report.cases += 1;
      report.statuses[status] = (report.statuses[status] ?? 0) + 1;
      if (status >= 500) report.fiveXx += 1;
      if (wrote) report.partialWrites += 1;
      if ((status >= 500 || wrote) && report.failures.length < MAX_FAILURES_KEPT) {
        report.failures.push({ key: target.key, status, wrote, input });
      }
    }
  }
  return report;
}
