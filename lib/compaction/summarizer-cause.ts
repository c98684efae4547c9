import { APICallError, RetryError } from "ai";
import { ContextOverflowError } from "./overflow";
import { SummarizerFailedError, SummaryRejectedError } from "./summarize";

/**
 * Why summarizing failed, in a few words the compaction trace can show ("summarizer timed
 * out"). The raw error stays in the log: it may quote a provider's response, a URL or
 * Fold's internals, none of which belongs on a user's screen.
 */
export function summarizerFailureCause(error: unknown): string {
  if (error instanceof SummarizerFailedError) {
    const causes = [...new Set(error.attempts.map((attempt) => singleCause(attempt.error)))];
    return causes.length > 0 ? causes.join("; ") : "no summarizer model is available";
  }
  return singleCause(error);
}

function singleCause(error: unknown): string {
  if (RetryError.isInstance(error) && error.lastError !== undefined) {
    return singleCause(error.lastError);
  }
  if (error instanceof SummaryRejectedError)
    return "the summarizer's answer was not a usable summary";
  if (ContextOverflowError.isInstance(error))
    return "the span does not fit the summarizer's window";
  if (APICallError.isInstance(error)) return providerCause(error.statusCode, error.responseBody);
  if (!(error instanceof Error)) return "the summarizer failed";
  const text = `${error.message} ${String(error.cause ?? "")}`;
  if (/^timed out after/.test(error.message)) return "summarizer timed out";
  if (/^no room for the span/.test(error.message)) {
    return "the span does not fit the summarizer's window";
  }
  if (error.name === "AbortError" || /aborted/i.test(error.message))
    return "summarizer was stopped";
  if (/fetch failed|ECONNREFUSED|ENOTFOUND|ECONNRESET|socket/i.test(text)) {
    return "summarizer unreachable";
  }
  return "the summarizer failed";
}

function providerCause(status: number | undefined, body: string | undefined): string {
  // No answer at all, or a 200 whose reply broke off as it was read: the connection, not a refusal.
  if (status === undefined || (status < 300 && body === undefined)) return "summarizer unreachable";
  if (status < 300)
    return `the summarizer's provider answered in a form Fold could not read (${status})`;
  if (status === 401 || status === 403) return "the summarizer's provider rejected Fold's key";
  if (status === 429) return "the summarizer's provider is rate-limiting";
  if (status >= 500) {
    return `the summarizer's provider had an internal error (${status})`;
  }
  return `the summarizer's provider refused the request (${status})`;
}
