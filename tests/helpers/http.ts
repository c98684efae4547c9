import { type Database, withDatabase } from "@/lib/db/client";
import { type CookieJar, keepCookies } from "./account";

/**
 * Calls the app's real route handlers in-process, against a test database,
 * with a cookie jar per simulated browser.
 */

export const ORIGIN = "http://localhost:3000";

type Handler<P> = (request: Request, context: { params: Promise<P> }) => Promise<Response>;

export type Browser = CookieJar;

export function anonymous(): Browser {
  return { cookie: "" };
}

export async function call<P = Record<string, never>>(
  database: Database,
  handler: Handler<P>,
  input: {
    path: string;
    method?: string;
    body?: unknown;
    rawBody?: string;
    params?: P;
    browser?: Browser;
    /** Set last: overrides the defaults (`origin`, `content-type`); an empty value removes one. */
    headers?: Record<string, string>;
    /** Aborts as a closed tab does (Next aborts the request's signal). */
    signal?: AbortSignal;
  },
): Promise<Response> {
  const headers = new Headers({ origin: ORIGIN });
  if (input.browser?.cookie) headers.set("cookie", input.browser.cookie);
  let body: string | undefined = input.rawBody;
  if (input.body !== undefined) body = JSON.stringify(input.body);
  // Like Fold's pages: every request that changes state says it sends JSON.
  const method = input.method ?? "GET";
  if (body !== undefined || !["GET", "HEAD"].includes(method)) {
    headers.set("content-type", "application/json");
  }
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    if (value === "") headers.delete(name);
    else headers.set(name, value);
  }
  const request = new Request(`${ORIGIN}${input.path}`, {
    method,
    headers,
    body,
    signal: input.signal,
  });
  const response = await withDatabase(database, () =>
    handler(request, { params: Promise.resolve((input.params ?? {}) as P) }),
  );
  if (input.browser) keepCookies(input.browser, response);
  return response;
}
