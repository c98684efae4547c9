import { APICallError, RetryError } from "ai";
import { describe, expect, it } from "vitest";
import { ContextOverflowError } from "@/lib/compaction/overflow";
import { SummarizerFailedError, SummaryRejectedError } from "@/lib/compaction/summarize";
import { summarizerFailureCause } from "@/lib/compaction/summarizer-cause";

const apiError = (statusCode: number, body = '{"error":{"message":"internal detail"}}') =>
  new APICallError({
    message: "provider said no",
    url: "http://10.0.0.9:8000/v1/chat/completions",
    requestBodyValues: {},
    statusCode,
    responseBody: body,
  });

describe("summarizerFailureCause", () => {
  it.each([
    ["a timeout", new Error("timed out after 60000 ms"), "summarizer timed out"],
    ["a refused request", apiError(400), "the summarizer's provider refused the request (400)"],
    [
      "a reply cut off after a 200",
      new APICallError({
        message: "Failed to process successful response",
        url: "http://10.0.0.9:8000/v1/chat/completions",
        requestBodyValues: {},
        statusCode: 200,
      }),
      "summarizer unreachable",
    ],
    [
      "a 200 in a shape it cannot read",
      apiError(200, "<html>Welcome</html>"),
      "the summarizer's provider answered in a form Fold could not read (200)",
    ],
    [
      "no answer at all",
      new APICallError({
        message: "Cannot connect to API: connect ECONNREFUSED 10.0.0.9:8000",
        url: "http://10.0.0.9:8000/v1/chat/completions",
        requestBodyValues: {},
      }),
      "summarizer unreachable",
    ],
    ["a bad key", apiError(401), "the summarizer's provider rejected Fold's key"],
    ["rate limiting", apiError(429), "the summarizer's provider is rate-limiting"],
    ["a provider crash", apiError(502), "the summarizer's provider had an internal error (502)"],
    [
      "retries that all failed",
      new RetryError({ message: "x", reason: "maxRetriesExceeded", errors: [apiError(503)] }),
      "the summarizer's provider had an internal error (503)",
    ],
    [
      "an unusable answer",
      new SummaryRejectedError("the reply has none of the summary's headings"),
      "the summarizer's answer was not a usable summary",
    ],
    [
      "a span too big for its window",
      new Error("no room for the span in a 4096-token window (chunk capacity 12 tokens)"),
      "the span does not fit the summarizer's window",
    ],
    [
      "an overflow",
      new ContextOverflowError("fake:small"),
      "the span does not fit the summarizer's window",
    ],
    [
      "a provider that is down",
      new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 10.0.0.9:8000") }),
      "summarizer unreachable",
    ],
    [
      "anything else",
      new Error("Cannot read properties of undefined (reading 'x')"),
      "the summarizer failed",
    ],
  ])("says %s in a few words", (_, error, cause) => {
    expect(summarizerFailureCause(error)).toBe(cause);
  });

  it("lists each distinct cause of a cascade once, and never the raw text", () => {
    const cascade = new SummarizerFailedError([
      { model: "a:one", error: new Error("timed out after 100 ms") },
      { model: "b:two", error: apiError(500, "stack trace at /srv/internal/secret.py") },
      { model: "c:three", error: new Error("timed out after 100 ms") },
    ]);
    const cause = summarizerFailureCause(cascade);
    expect(cause).toBe(
      "summarizer timed out; the summarizer's provider had an internal error (500)",
    );
    expect(cause).not.toMatch(/secret|10\.0\.0\.9|100 ms/);
  });
});
