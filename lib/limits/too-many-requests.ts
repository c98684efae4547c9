import { AppError } from "@/lib/errors";

/**
 * A 429 that says when to come back: a `Retry-After` header in seconds and `resetsAt` in the
 * body, so the browser can show the time without parsing the message. None for a limit that
 * waiting does not lift (an allowance of 0).
 */
export class TooManyRequestsError extends AppError {
  readonly resetsAt: Date | null;

  constructor(code: `too_many_requests:${string}`, message: string, resetsAt: Date | null) {
    super(code, message);
    this.name = "TooManyRequestsError";
    this.resetsAt = resetsAt;
  }

  override toResponse(): Response {
    if (!this.resetsAt) {
      return Response.json(
        { error: { code: this.code, message: this.message } },
        { status: this.status },
      );
    }
    const retryAfterSeconds = Math.max(1, Math.ceil((this.resetsAt.getTime() - Date.now()) / 1000));
    return Response.json(
      { error: { code: this.code, message: this.message, resetsAt: this.resetsAt.toISOString() } },
      { status: this.status, headers: { "retry-after": String(retryAfterSeconds) } },
    );
  }
}
