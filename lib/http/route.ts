import type { z } from "zod";
import { getDatabase } from "@/lib/db/client";
import { pingDatabase } from "@/lib/db/migrate";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { AppError, databaseUnavailable, errorResponse } from "@/lib/errors";
import { log } from "@/lib/log";
import { findUnstorableText } from "@/lib/message/unstorable-text";
import { readBodyText } from "./body";
import { untransformedEventStream } from "./event-stream";
import { checkStateChange } from "./origin";

const MAX_JSON_BODY_BYTES = 1_000_000;
/** How long a failed request waits to learn whether the database is the reason. */
const DATABASE_PROBE_TIMEOUT_MS = 2_000;
/** nginx's status for a request its client closed: no one reads it, and it tells logs apart. */
const CLIENT_CLOSED_REQUEST = 499;

type Context<P> = { params: Promise<P> };

type RouteOptions = {
  /** better-auth checks the origin of its own routes; every other route leaves this on. */
  checkOrigin?: boolean;
};

/** Whether the database answers; false on any error or after the probe timeout. */
async function databaseReachable(): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("probe timed out")), DATABASE_PROBE_TIMEOUT_MS);
  });
  try {
    await Promise.race([getDatabase().then(pingDatabase), timeout]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The handler stopped because its client disconnected (a page that navigated away mid-request:
 * Next aborts the request's signal with a ResponseAborted): nothing failed on the server.
 */
function clientWentAway(request: Request, error: unknown): boolean {
  return (
    request.signal.aborted &&
    error instanceof Error &&
    (error.name === "ResponseAborted" || error.name === "AbortError")
  );
}

/**
 * Wraps a route handler so that every request passes the same gate and every failure is
 * answered in one place. Before the handler runs, a state-changing request from a foreign
 * origin or without a JSON body is refused (403/415), and so are path parameters Postgres
 * could not store (400). After: an AppError becomes its status; a database that cannot be
 * reached becomes 503 with Retry-After (also when a failure only hides it, so the database
 * is probed once); a handler stopped by its client going away is noted, not reported;
 * anything else is a 500 with an error id (`errorResponse`). An event
 * stream goes out marked `no-transform`, so nothing compresses it (lib/http/event-stream.ts).
 */
export function route<P = Record<string, never>>(
  handler: (request: Request, context: Context<P>) => Promise<Response>,
  options: RouteOptions = {},
) {
  return async (request: Request, context: Context<P>): Promise<Response> => {
    const where = { method: request.method, path: new URL(request.url).pathname };
    try {
      if (options.checkOrigin !== false) checkStateChange(request);
      const params = (await context?.params) ?? ({} as P);
      refuseUnstorable(params, "bad_request:params");
      const response = await handler(request, { params: Promise.resolve(params) });
      // Libraries (better-auth) answer their own 500s; one caused by an outage is a 503.
      if (response.status >= 500 && response.status !== 503 && !(await databaseReachable())) {
        log.warn({ ...where, status: response.status }, "database unavailable");
        return databaseUnavailable().toResponse();
      }
      return untransformedEventStream(response);
    } catch (error) {
      if (clientWentAway(request, error)) {
        log.info(where, "the client went away before its answer");
        return new Response(null, { status: CLIENT_CLOSED_REQUEST });
      }
      if (
        !(error instanceof AppError) &&
        !isDatabaseUnavailable(error) &&
        !(await databaseReachable())
      ) {
        log.warn({ err: error, ...where }, "database unavailable");
        return databaseUnavailable(error).toResponse();
      }
      return errorResponse(error, where);
    }
  };
}

/**
 * The first zod issue as one clear sentence: `field.path: message`, or the message alone when
 * it names its field itself ("limit must be at least 1").
 */
function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const message = issue?.message ?? "invalid input";
  if (!issue?.path.length) return message;
  const field = String(issue.path.at(-1));
  const named = message.startsWith(field) && !/\w/.test(message.charAt(field.length));
  return named ? message : `${issue.path.join(".")}: ${message}`;
}

/** Validated input must still be storable: a net under every schema (NUL, lone surrogates). */
export function refuseUnstorable(
  value: unknown,
  code: `bad_request:${"body" | "query" | "params"}`,
) {
  const found = findUnstorableText(value);
  if (!found) return;
  const where = found.path.length ? `${found.path.join(".")}: ` : "";
  throw new AppError(code, `${where}the text ${found.reason}.`);
}

/** Reads a JSON body with a size limit and validates it; every failure is a clear 4xx. */
export async function readJson<S extends z.ZodType>(
  request: Request,
  schema: S,
  options: { maxBytes?: number; emptyAs?: unknown } | number = {},
): Promise<z.infer<S>> {
  const { maxBytes = MAX_JSON_BODY_BYTES, emptyAs } =
    typeof options === "number" ? { maxBytes: options } : options;
  const text = await readBodyText(request, maxBytes);
  let raw: unknown = emptyAs;
  try {
    if (emptyAs === undefined || text.trim() !== "") raw = JSON.parse(text);
  } catch {
    throw new AppError("bad_request:body", "The request body is not valid JSON.");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new AppError("bad_request:body", describeIssue(parsed.error));
  refuseUnstorable(parsed.data, "bad_request:body");
  return parsed.data;
}

/** Validates the query string (each parameter once, as a string); failures are a clear 400. */
export function readQuery<S extends z.ZodType>(request: Request, schema: S): z.infer<S> {
  const search = new URL(request.url).searchParams;
  const params: Record<string, string> = {};
  for (const [key, value] of search) {
    // Twice (?format=json&format=markdown): which one was meant is not ours to pick.
    if (Object.hasOwn(params, key)) {
      throw new AppError("bad_request:query", `${key}: give it once.`);
    }
    params[key] = value;
  }
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw new AppError("bad_request:query", describeIssue(parsed.error));
  refuseUnstorable(parsed.data, "bad_request:query");
  return parsed.data;
}
