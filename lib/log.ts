import pino, { type DestinationStream, type Logger } from "pino";
import { env } from "@/lib/env";
import { REDACTED, scrubError, scrubText } from "@/lib/log-scrub";

/**
 * JSON-lines logger; counters and timings carry a `metric` field (DESIGN §14).
 * Secrets never reach a log line: fields that carry them are censored by path,
 * and errors go through `scrubError`, which drops the SQL parameters Drizzle
 * puts into "Failed query" errors (a session lookup's params are the token).
 */

const SECRET_KEYS = [
  "cookie",
  "authorization",
  "token",
  "sessionToken",
  "password",
  "secret",
  "apiKey",
  '["set-cookie"]',
  '["x-api-key"]',
];

/** Each secret key at the top of a log object, one level down, and under `headers`. */
export const REDACT_PATHS = SECRET_KEYS.flatMap((key) => {
  const child = key.startsWith("[") ? key : `.${key}`;
  return [key, `*${child}`, `headers${child}`, `*.headers${child}`];
});

type LoggingOptions = { level?: string; destination?: DestinationStream };

/** A logger, `metric` and better-auth's log handler writing to one destination (stdout by default). */
export function createLogging(options: LoggingOptions = {}) {
  const config = {
    level: options.level ?? env().logLevel,
    base: { app: "fold" },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    serializers: { err: (error: unknown) => pino.stdSerializers.err(scrubError(error) as Error) },
  };
  const logger: Logger = options.destination ? pino(config, options.destination) : pino(config);

  function metric(name: string, fields: Record<string, unknown> = {}): void {
    logger.info({ metric: name, ...fields }, name);
  }

  /** better-auth's `logger.log`: its lines join ours, errors scrubbed like ours. */
  function authLog(
    level: "debug" | "info" | "warn" | "error",
    message: string,
    ...args: unknown[]
  ) {
    const err = args.find((arg) => arg instanceof Error);
    // Plain values only: an object it passes along could hold a session or a user row.
    const details = args
      .filter((arg) => ["string", "number", "boolean"].includes(typeof arg))
      .map((arg) => (typeof arg === "string" ? scrubText(arg) : arg));
    logger[level](
      { source: "better-auth", ...(err ? { err } : {}), ...(details.length ? { details } : {}) },
      scrubText(message),
    );
  }

  return { log: logger, metric, authLog };
}

export const { log, metric, authLog } = createLogging();
