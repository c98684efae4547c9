/**
 * Whether an error means "the database cannot be reached" (answered 503, retried by the
 * browser) rather than "this query is wrong" (a bug, answered 500). Errors arrive wrapped:
 * the cause chain is read (errors.ts).
 */
import { DrizzleQueryError } from "drizzle-orm";
import { causes, fieldOf } from "./errors";

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

/**
 * `fromDatabase`: the error is known to come from the database driver (opening it), so a socket
 * failure counts without a Drizzle query around it.
 */
export function isDatabaseUnavailable(
  error: unknown,
  options: { fromDatabase?: boolean } = {},
): boolean {
  let fromDatabase = options.fromDatabase === true;
  for (const link of causes(error)) {
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
