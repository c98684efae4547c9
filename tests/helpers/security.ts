import { sql } from "drizzle-orm";
import type { Database } from "@/lib/db/client";
import { type ApiRoute, fillPath, paramsFor, stateChangingEndpoints } from "./api-routes";
import { type Browser, call, ORIGIN } from "./http";

/**
 * Shared by the security suite (tests/integration/security) and its benchmark
 * (tests/bench/security.ts): the CSRF attacks, and a fingerprint of what users own, to
 * prove a refused request wrote nothing.
 */

/** Tables whose rows a request may create or change on a user's behalf. */
const CONTENT_TABLES = [
  "user",
  "account",
  "chat",
  "message",
  "compaction_event",
  "model_override",
] as const;

/** One hash over every row of the content tables: equal before and after means nothing was written. */
export async function contentFingerprint(database: Database): Promise<string> {
  const parts: string[] = [];
  for (const table of CONTENT_TABLES) {
    const result = (await database.db.execute(
      sql.raw(
        `select count(*)::int as n, coalesce(sum(hashtext(t::text)::bigint), 0)::text as h from "${table}" t`,
      ),
    )) as unknown as { rows: Array<{ n: number; h: string }> };
    const row = result.rows[0];
    parts.push(`${table}:${row?.n}:${row?.h}`);
  }
  return parts.join(" ");
}

/** What a forged cross-site request can look like; none may get past the origin check. */
export const CSRF_ATTACKS: ReadonlyArray<{ name: string; headers: Record<string, string> }> = [
  { name: "a foreign Origin", headers: { origin: "http://evil.example" } },
  { name: "a look-alike Origin", headers: { origin: `${ORIGIN}.evil.example` } },
  {
    name: "the right host on another scheme",
    headers: { origin: ORIGIN.replace("http:", "https:") },
  },
  { name: "Origin: null (a sandboxed frame)", headers: { origin: "null" } },
  {
    name: "no Origin and a foreign Referer",
    headers: { origin: "", referer: "http://evil.example/form.html" },
  },
  { name: "no Origin and no Referer", headers: { origin: "" } },
  {
    name: "a foreign Origin with a form's content type",
    headers: { origin: "http://evil.example", "content-type": "text/plain" },
  },
];

export type Endpoint = ReturnType<typeof stateChangingEndpoints>[number];

export type CsrfOutcome = {
  endpoint: string;
  attack: string;
  status: number;
  code: string | null;
  /** The content tables changed although the request was refused (or not refused). */
  wrote: boolean;
};

/** Sends every attack to one endpoint, signed in as `browser`; a realistic body each time. */
export async function attackEndpoint(
  database: Database,
  endpoint: Endpoint,
  input: { browser: Browser; values: Record<string, string>; body: unknown },
): Promise<CsrfOutcome[]> {
  const outcomes: CsrfOutcome[] = [];
  for (const attack of CSRF_ATTACKS) {
    const before = await contentFingerprint(database);
    const response = await call(database, endpoint.handler, {
      path: fillPath(endpoint.route.pattern, input.values),
      method: endpoint.method,
      params: paramsFor(endpoint.route.pattern, input.values),
      body: input.body,
      browser: input.browser,
      headers: attack.headers,
    });
    const json = (await response.json().catch(() => null)) as {
      error?: { code?: string };
    } | null;
    outcomes.push({
      endpoint: `${endpoint.method} ${endpoint.route.pattern}`,
      attack: attack.name,
      status: response.status,
      code: json?.error?.code ?? null,
      wrote: (await contentFingerprint(database)) !== before,
    });
  }
  return outcomes;
}

/** Fold's own state-changing endpoints (better-auth guards its routes itself). */
export function foldEndpoints(routes: readonly ApiRoute[]): Endpoint[] {
  return stateChangingEndpoints(routes).filter((e) => !e.route.betterAuth);
}
