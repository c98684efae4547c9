/**
 * Reading the server's answer out of a failed chat request: the AI SDK's transport throws an
 * Error whose message is the response body, `{ error: { code, message, resetsAt? } }`.
 */

type ServerError = { code: string; message: string; resetsAt?: string };

/** A quota or rate limit the composer shows until the user sends again. */
export type LimitNotice = { message: string; resetsAt: Date | null };

export function serverErrorOf(error: Error | undefined): ServerError | null {
  if (!error) return null;
  try {
    const body = JSON.parse(error.message) as { error?: Partial<ServerError> };
    const { code, message, resetsAt } = body.error ?? {};
    return typeof code === "string" && typeof message === "string"
      ? { code, message, resetsAt }
      : null;
  } catch {
    return null;
  }
}

/** The error as a person should read it: the server's own message when there is one. */
export function readableError(error: Error): string {
  return serverErrorOf(error)?.message ?? error.message;
}

/** A 429 (`too_many_requests:*`) as the composer's notice; anything else is not one. */
export function limitNoticeOf(error: Error | undefined): LimitNotice | null {
  const server = serverErrorOf(error);
  if (!server?.code.startsWith("too_many_requests:")) return null;
  const resetsAt = server.resetsAt ? new Date(server.resetsAt) : null;
  return {
    message: server.message,
    resetsAt: resetsAt && !Number.isNaN(resetsAt.getTime()) ? resetsAt : null,
  };
}
