import {
  APICallError,
  InvalidToolInputError,
  JSONParseError,
  RetryError,
  TypeValidationError,
} from "ai";
import { DrizzleQueryError } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createLogging } from "@/lib/log";

const TOKEN = "s3ss10n-t0k3n-abcdef";

function capture() {
  const lines: string[] = [];
  const logging = createLogging({
    level: "debug",
    destination: { write: (l) => void lines.push(l) },
  });
  return { ...logging, text: () => lines.join("\n") };
}

function refused(): Error {
  return Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
}

function failedQuery(): DrizzleQueryError {
  return new DrizzleQueryError(
    'select "user_id" from "session" where "session"."token" = $1',
    [TOKEN],
    refused(),
  );
}

describe("the logger", () => {
  it("drops SQL parameters from a failed query, keeping the query and the cause", () => {
    const { log, text } = capture();
    log.error({ err: failedQuery() }, "request failed");
    expect(text()).not.toContain(TOKEN);
    expect(text()).toContain('from \\"session\\" where');
    expect(text()).toContain("params: [redacted]");
    expect(text()).toContain("ECONNREFUSED");
  });

  it("scrubs a failed query wherever it hides: a cause, a field's hidden cause, an aggregate", () => {
    const { log, text } = capture();
    // better-auth's APIError keeps the failed query as the hidden `cause` of its `body` too.
    const body = { message: "Failed to get session", code: "FAILED_TO_GET_SESSION" };
    Object.defineProperty(body, "cause", { value: failedQuery(), enumerable: false });
    const apiError = Object.assign(new Error("Failed to get session", { cause: failedQuery() }), {
      body,
    });
    log.warn({ err: apiError }, "wrapped");
    log.warn({ err: new AggregateError([failedQuery()], "several") }, "aggregate");
    expect(text()).toContain("Failed to get session");
    expect(text()).not.toContain(TOKEN);
  });

  it("redacts Postgres' detail, which quotes row values", () => {
    const { log, text } = capture();
    const duplicate = Object.assign(new Error("duplicate key value violates unique constraint"), {
      code: "23505",
      detail: `Key (token)=(${TOKEN}) already exists.`,
    });
    log.error({ err: duplicate }, "insert failed");
    expect(text()).not.toContain(TOKEN);
    expect(text()).toContain("23505");
  });

  it("drops the conversation a failed model call carries, keeping what the provider said", () => {
    const { log, text } = capture();
    const rateLimited = new APICallError({
      message: "Too Many Requests",
      url: "https://api.example.com/v1/chat/completions",
      requestBodyValues: { messages: [{ role: "user", content: "my private medical question" }] },
      statusCode: 429,
      responseBody: '{"error":{"message":"Rate limit reached for requests"}}',
    });
    log.warn(
      {
        err: new RetryError({
          message: "gave up",
          reason: "maxRetriesExceeded",
          errors: [rateLimited],
        }),
      },
      "turn failed",
    );
    log.warn({ err: rateLimited }, "model stream error");
    expect(text()).not.toContain("private medical");
    expect(text()).toContain("Rate limit reached for requests");
    expect(text()).toContain("429");
  });

  it("logs a retry's last attempt whole and each earlier one as one line", () => {
    const { log, text } = capture();
    const attempt = (n: number) =>
      new APICallError({
        message: `Bad Gateway ${n}`,
        url: "https://api.example.com/v1/chat/completions",
        requestBodyValues: { messages: [] },
        statusCode: 502,
        responseBody: `<html>proxy page ${n}</html>`,
        isRetryable: true,
      });
    const errors = [attempt(1), attempt(2), attempt(3)];
    log.error(
      {
        err: new RetryError({
          message: "Failed after 3 attempts",
          reason: "maxRetriesExceeded",
          errors,
        }),
      },
      "turn failed",
    );
    const line = text();
    // The provider's answers and stacks once each (the retry's, the last attempt's), not once
    // per list that holds them.
    expect(line.match(/proxy page/g)).toHaveLength(1);
    expect(line.match(/"stack":/g)).toHaveLength(2);
    expect(line).toContain("Bad Gateway 1 (502)");
    expect(line).toContain("Bad Gateway 2 (502)");
  });

  it("drops a model's chunk or a tool's input that an SDK error quotes in its message", () => {
    const { log, text } = capture();
    const unread = new TypeValidationError({
      value: { choices: [{ delta: { content: "PRIVATE-CHUNK" } }] },
      cause: new Error("expected a string"),
    });
    const notJson = new JSONParseError({
      text: '{"PRIVATE-TEXT',
      cause: new Error("Unexpected end"),
    });
    const badInput = new InvalidToolInputError({
      toolName: "fetch_url",
      toolInput: '{"url":"PRIVATE-INPUT"}',
      cause: new TypeValidationError({
        value: { url: "PRIVATE-INPUT" },
        cause: new Error("bad url"),
      }),
    });
    for (const err of [unread, notJson, badInput]) log.warn({ err }, "model stream error");
    expect(text()).not.toMatch(/PRIVATE/);
    // What went wrong stays.
    expect(text()).toContain("expected a string");
    expect(text()).toContain("Invalid input for tool fetch_url");
  });

  it("leaves the logged error itself untouched", () => {
    const { log } = capture();
    const error = failedQuery();
    log.error({ err: error }, "x");
    expect(error.message).toContain(TOKEN);
    expect(error.params).toEqual([TOKEN]);
  });

  it("censors cookies, authorization headers, tokens and passwords by field name", () => {
    const { log, text } = capture();
    log.info(
      {
        headers: { cookie: `better-auth.session_token=${TOKEN}`, authorization: `Bearer ${TOKEN}` },
        token: TOKEN,
        user: { password: TOKEN, apiKey: TOKEN },
        response: { headers: { "set-cookie": TOKEN } },
      },
      "request",
    );
    expect(text()).not.toContain(TOKEN);
    expect(text()).toContain("[redacted]");
  });

  it("takes better-auth's lines and scrubs the errors they carry", () => {
    const { authLog, text } = capture();
    authLog("error", "INTERNAL_SERVER_ERROR", failedQuery());
    const line = JSON.parse(text()) as { source: string; msg: string; err: { message: string } };
    expect(line).toMatchObject({ source: "better-auth", msg: "INTERNAL_SERVER_ERROR" });
    expect(line.err.message).toContain("params: [redacted]");
    authLog("error", `Failed query: select 1\nparams: ${TOKEN}`, `also\nparams: ${TOKEN}`, 42);
    expect(text()).not.toContain(TOKEN);
    expect(text()).toContain('"details":["also\\nparams: [redacted]",42]');
  });
});
