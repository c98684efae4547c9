import { isDeletedChatReference, isDeletedUserReference } from "@/lib/db/errors";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { log } from "@/lib/log";

/**
 * One error type for everything a route can answer with. Handlers throw it;
 * `errorResponse` (called by `lib/http/route.ts`) turns anything thrown into a
 * response in one place. Errors Fold did not expect are logged under an error
 * id; users see a short cause and that id, never the internal text.
 */

/** A database outage usually lasts seconds (a restart, a failover): ask clients to retry soon. */
export const DATABASE_RETRY_AFTER_S = 5;

const STATUS_BY_TYPE = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  unavailable: 503,
} as const;

export type ErrorType = keyof typeof STATUS_BY_TYPE;
/** `type:surface`, e.g. `not_found:chat` or `bad_request:body`. */
export type ErrorCode = `${ErrorType}:${string}`;

const DEFAULT_MESSAGES: Record<ErrorType, string> = {
  bad_request: "The request could not be processed. Check the input and try again.",
  unauthorized: "You need to sign in first.",
  forbidden: "You do not have access to this.",
  not_found: "Not found.",
  conflict: "That cannot be done right now.",
  payload_too_large: "The request is too large.",
  unsupported_media_type: "Send the request body as JSON (Content-Type: application/json).",
  too_many_requests: "Too many requests. Try again later.",
  unavailable: "A service Fold depends on is unavailable. Try again shortly.",
};

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly type: ErrorType;
  readonly status: number;
  /** Sent as `Retry-After` (seconds) when set. */
  readonly retryAfterSeconds?: number;

  constructor(
    code: ErrorCode,
    message?: string,
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    const type = code.split(":")[0] as ErrorType;
    super(message ?? DEFAULT_MESSAGES[type], options);
    this.name = "AppError";
    this.code = code;
    this.type = type;
    this.status = STATUS_BY_TYPE[type];
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }

  toResponse(): Response {
    const headers: Record<string, string> =
      this.retryAfterSeconds === undefined ? {} : { "retry-after": String(this.retryAfterSeconds) };
    return Response.json(
      { error: { code: this.code, message: this.message } },
      { status: this.status, headers },
    );
  }
}

export function databaseUnavailable(cause?: unknown): AppError {
  return new AppError(
    "unavailable:database",
    "Fold can't reach its database right now. It keeps retrying; try again in a few seconds.",
    { cause, retryAfterSeconds: DATABASE_RETRY_AFTER_S },
  );
}

/** Short, unguessable enough to find one log line, short enough to read out. */
export function newErrorId(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 12);
}

/** Logs an error Fold did not expect with its full text under a fresh id, and returns the id. */
export function reportError(
  error: unknown,
  context: Record<string, unknown> = {},
  message = "unexpected error",
): string {
  const errorId = newErrorId();
  log.error({ err: error, errorId, ...context }, message);
  return errorId;
}

/**
 * What a user may read about a failure: an AppError's own message, else a short cause and
 * the id of the log line that holds the details (e.g. the error chunk of a failed turn).
 */
export function publicErrorText(
  error: unknown,
  context: Record<string, unknown> = {},
  logMessage?: string,
): string {
  if (error instanceof AppError) return error.message;
  const errorId = reportError(error, context, logMessage);
  const cause = isDatabaseUnavailable(error)
    ? "Fold can't reach its database"
    : "Something went wrong on Fold's side";
  return `${cause} (error id ${errorId}). Retry in a moment.`;
}

/** 404 for work on a chat that was deleted while it ran or waited. */
export const chatDeleted = () => new AppError("not_found:chat", "This chat was deleted.");

/** The one mapping from anything a handler threw to the response the client gets. */
export function errorResponse(error: unknown, context: Record<string, unknown> = {}): Response {
  if (error instanceof AppError) return error.toResponse();
  if (isDeletedChatReference(error)) {
    return chatDeleted().toResponse();
  }
  if (isDeletedUserReference(error)) {
    return new AppError("unauthorized:auth", "This account no longer exists.").toResponse();
  }
  if (isDatabaseUnavailable(error)) {
    log.warn({ err: error, ...context }, "database unavailable");
    return databaseUnavailable().toResponse();
  }
  const errorId = reportError(error, context, "unhandled route error");
  return Response.json(
    {
      error: {
        code: "internal",
        message: `Something went wrong on Fold's side (error id ${errorId}).`,
        errorId,
      },
    },
    { status: 500 },
  );
}
