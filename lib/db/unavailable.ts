/**
 * Whether an error means "the database cannot be reached" (answered 503, retried by the
 * browser) rather than "this query is wrong" (a bug, answered 500). Errors arrive wrapped:
 * better-auth's APIError → Drizzle's "Failed query" → the driver's own error, so the whole
 * cause chain is read.
 */
import { DrizzleQueryError } from "drizzle-orm";

/** Socket-level failures: the server is down, restarting, or unreachable. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "ECONNABORTED",
]);

/** SQLSTATEs of a server that is there but not serving: connection exceptions, shutdowns, full. */
const SERVER_STATES = new Set([
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, recovering)
  "53300", // too_many_connections
]);

/** What pg, pg-pool and PGlite say when they have no connection; they carry no code. */
const DRIVER_MESSAGES =
  /^(PGlite is closed|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end)/;

/** How deep a cause chain is read; real ones are three or four links. */
const MAX_CHAIN = 8;

function fieldOf(error: object, key: "code" | "cause" | "message"): unknown {
  return (error as Record<string, unknown>)[key];
}

/** The error and its causes, outermost first (AggregateError's members included). */
function chain(error: unknown): object[] {
  const out: object[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && out.length < MAX_CHAIN) {
    const next = queue.shift();
    if (next === null || typeof next !== "object" || out.includes(next)) continue;
    out.push(next);
    queue.push(fieldOf(next, "cause"));
    if (next instanceof AggregateError) queue.push(...next.errors);
  }
  return out;
}

export function isDatabaseUnavailable(error: unknown): boolean {
  let fromDatabase = false;
  for (const link of chain(error)) {
    const code = fieldOf(link, "code");
    const message = fieldOf(link, "message");
    // A socket error only counts under a database layer: a provider's ECONNREFUSED is not ours.
    if (link instanceof DrizzleQueryError) fromDatabase = true;
    if (typeof message === "string" && DRIVER_MESSAGES.test(message)) return true;
    if (typeof code === "string" && SERVER_STATES.has(code)) return true;
    if (fromDatabase && typeof code === "string" && SOCKET_CODES.has(code)) return true;
  }
  return false;
}
