/**
 * Errors are logged without the values they carry. Drizzle's "Failed query: … params: …"
 * puts every bound parameter — session tokens, emails, message text — into the message, the
 * stack and a `params` field; Postgres' `detail` quotes row values ("Key (token)=(…)"); a
 * failed model call's error carries the conversation it sent.
 * `scrubError` returns a copy of an error with those replaced — and of everything error-like
 * it holds: its causes, an AggregateError's members, and fields like better-auth's `body`,
 * whose hidden `cause` the logger would otherwise print. The error itself is left alone.
 */

export const REDACTED = "[redacted]";

/**
 * Fields of errors that quote users' data: a driver's bound parameters and row values, and the
 * AI SDK's copy of the request a failed model call sent (`requestBodyValues`: the whole
 * conversation), the prompt it refused, a tool call's input and a chunk it could not read
 * (`value`, `text`; their messages quote them too: scrubText). The
 * provider's own answer (`responseBody`) stays: it says why the call failed.
 */
const VALUE_FIELDS = [
  "params",
  "detail",
  "parameters",
  "requestBodyValues",
  "prompt",
  "toolInput",
  "value",
  "text",
] as const;
const MAX_DEPTH = 8;

type ErrorLike = { message: string; stack?: string; cause?: unknown } & Record<string, unknown>;

function isErrorLike(value: unknown): value is ErrorLike {
  return (
    value !== null && typeof value === "object" && typeof (value as ErrorLike).message === "string"
  );
}

/**
 * The AI SDK's messages that quote what they could not read: "Value: {json}." (a chunk or a
 * tool's input failing its schema) and "Text: …." (a chunk that is not JSON), each followed by
 * the cause's message.
 */
const QUOTED_VALUE = /((?:Value|Text): )[\s\S]*?(\.\nError message: )/g;

/**
 * Text that quotes a failed query (a wrapper's message, a library's log line) loses its params;
 * one that quotes a model's output or a tool's input loses that.
 */
export function scrubText(text: string): string {
  return text
    .replace(/(\nparams: )[\s\S]*$/, `$1${REDACTED}`)
    .replace(QUOTED_VALUE, `$1${REDACTED}$2`);
}

/** Drizzle's wrapper: the query text is Fold's own SQL, the params are users' data. */
function scrubbedMessage(error: ErrorLike): string {
  if (typeof error.query === "string" && "params" in error) {
    return `Failed query: ${error.query}\nparams: ${REDACTED}`;
  }
  return scrubText(error.message);
}

function hidden(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: false,
    writable: true,
    configurable: true,
  });
}

/**
 * One line for an attempt a retry gave up on. The AI SDK's RetryError holds every attempt in
 * `errors` and the last one again in `lastError`; logged whole, each attempt's stack and the
 * provider's answer came out three times (pino lists `errors` once more as `aggregateErrors`).
 * The last attempt stays whole; the earlier ones say what they were.
 */
function attemptLine(attempt: unknown): unknown {
  if (!isErrorLike(attempt)) return attempt;
  const status = typeof attempt.statusCode === "number" ? ` (${attempt.statusCode})` : "";
  const name = attempt instanceof Error ? `${attempt.name}: ` : "";
  return `${name}${scrubbedMessage(attempt)}${status}`;
}

export function scrubError(error: unknown, depth = 0): unknown {
  if (!isErrorLike(error) || depth > MAX_DEPTH) return error;
  const copy = Object.create(Object.getPrototypeOf(error)) as ErrorLike;
  for (const [key, value] of Object.entries(error)) {
    copy[key] = isErrorLike(value) ? scrubError(value, depth + 1) : value;
  }
  const message = scrubbedMessage(error);
  hidden(copy, "message", message);
  hidden(copy, "stack", error.stack?.replace(error.message, message));
  if (error instanceof Error) hidden(copy, "name", error.name);
  for (const field of VALUE_FIELDS) if (field in error) copy[field] = REDACTED;
  if (error.cause !== undefined) hidden(copy, "cause", scrubError(error.cause, depth + 1));
  if (Array.isArray(error.errors)) {
    copy.errors = isErrorLike(error.lastError)
      ? error.errors.map(attemptLine)
      : error.errors.map((inner: unknown) => scrubError(inner, depth + 1));
  }
  return copy;
}
