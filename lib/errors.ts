/**
 * One error type for everything a route can answer with. Handlers throw it;
 * `lib/http/route.ts` turns it into a response in one place.
 */

const STATUS_BY_TYPE = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
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
  unavailable: "A service Fold depends on is unavailable. Try again shortly.",
};

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly type: ErrorType;
  readonly status: number;

  constructor(code: ErrorCode, message?: string, options?: { cause?: unknown }) {
    const type = code.split(":")[0] as ErrorType;
    super(message ?? DEFAULT_MESSAGES[type], options);
    this.name = "AppError";
    this.code = code;
    this.type = type;
    this.status = STATUS_BY_TYPE[type];
  }

  toResponse(): Response {
    return Response.json(
      { error: { code: this.code, message: this.message } },
      { status: this.status },
    );
  }
}
