import { APICallError, InvalidResponseDataError, RetryError, StreamProviderError } from "ai";
import { ContextOverflowError } from "@/lib/compaction/overflow";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { AppError, publicErrorText } from "@/lib/errors";

const BODY_EXCERPT_CHARS = 300;
/** A server that is not ready says why in a few words; more than that is not for the user. */
const NOT_READY_EXCERPT_CHARS = 120;

function providerMessage(error: APICallError): string | undefined {
  if (!error.responseBody) return undefined;
  try {
    const body = JSON.parse(error.responseBody) as {
      error?: { message?: string } | string;
      message?: string;
    };
    if (typeof body.error === "string") return body.error;
    return body.error?.message ?? body.message;
  } catch {
    return error.responseBody.slice(0, BODY_EXCERPT_CHARS);
  }
}

/**
 * A sentence a user can act on, never the SDK's generic "An error occurred" and never
 * Fold's internal text: what the provider said is the provider's, anything else is
 * logged under an error id and shown as a short cause with that id.
 */
const UNREACHABLE =
  "Fold could not reach the model provider, or the connection dropped mid-reply. Retry in a moment.";

export function describeModelError(error: unknown): string {
  // After the SDK's own retries, the last attempt's error is the one that matters.
  if (RetryError.isInstance(error) && error.lastError !== undefined) {
    return describeModelError(error.lastError);
  }
  if (ContextOverflowError.isInstance(error)) return error.message;
  if (error instanceof AppError) return error.message;
  // Before the network checks below: a database socket error is ours, not the provider's.
  if (isDatabaseUnavailable(error)) return `The reply failed: ${publicErrorText(error)}`;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    // No answer at all ("Cannot connect to API: connect ECONNREFUSED 10.0.0.9:11434"): the
    // provider's address is the server's business, not the user's.
    if (status === undefined) return UNREACHABLE;
    const detail = providerMessage(error) ?? error.message;
    if (status < 300) {
      // The provider answered 200 and its reply broke off as it was read ("Failed to process
      // successful response", caused by "terminated: other side closed", no body kept): a
      // connection that dropped mid-reply. With a body, it answered in a shape Fold cannot read
      // (a base URL missing its /v1, a proxy's own page).
      if (error.responseBody === undefined) return UNREACHABLE;
      return `The model provider answered in a form Fold could not read (${status}): ${detail}. Check its base URL.`;
    }
    if (status === 401 || status === 403)
      return `The model provider rejected Fold's credentials (${status}). An admin should check the API key.`;
    if (status === 429)
      return "The model provider is rate-limiting requests. Wait a moment and retry.";
    // Not ready rather than broken: llama.cpp answers 503 "Loading model" while it loads one,
    // OpenAI 503 and Anthropic 529 when overloaded. Their words say which.
    if (status === 503 || status === 529) {
      const said = providerMessage(error)?.trim().slice(0, NOT_READY_EXCERPT_CHARS);
      return `The model provider is busy or still loading the model (${status}${said ? `: ${said}` : ""}). Retry in a moment.`;
    }
    if (status >= 500)
      return `The model provider had an internal error (${status}). Retry in a moment.`;
    return `The model provider refused the request${status ? ` (${status})` : ""}: ${detail}`;
  }
  // A failure the provider sent inside its stream, after answering 200 (llama.cpp, vLLM and
  // Ollama send one that comes once the reply began as a `{"error": {...}}` frame): its words,
  // not Fold's failure.
  if (StreamProviderError.isInstance(error)) {
    const status = error.statusCode;
    if (status !== undefined && status >= 500)
      return `The model provider had an internal error mid-reply (${status}). Retry in a moment.`;
    const said = error.message.trim().slice(0, BODY_EXCERPT_CHARS) || error.type || "no reason";
    return `The model provider stopped the reply with an error${status ? ` (${status})` : ""}: ${said}`;
  }
  // A stream that ended without its reply finishing (the server closed it early, or sent its
  // error in a form the SDK cannot read, as some llama.cpp builds do for a prompt too long).
  if (InvalidResponseDataError.isInstance(error)) {
    return "The model provider's reply ended before it finished: its server closed the stream early or sent an error Fold could not read. Retry, or check the server's log (a prompt too long for its context is a common cause).";
  }
  if (error instanceof Error) {
    if (error.name === "AbortError" || /aborted/i.test(error.message))
      return "The reply was stopped.";
    if (
      /fetch failed|ECONNREFUSED|ENOTFOUND|terminated|socket/i.test(
        `${error.message} ${String(error.cause ?? "")}`,
      )
    ) {
      return UNREACHABLE;
    }
  }
  return `The reply failed: ${publicErrorText(error)}`;
}
