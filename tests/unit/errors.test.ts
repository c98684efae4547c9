import { APICallError, RetryError } from "ai";
import { DrizzleQueryError } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { describeModelError } from "@/lib/ai/errors";
import { AppError, DATABASE_RETRY_AFTER_S, errorResponse, publicErrorText } from "@/lib/errors";
import { log } from "@/lib/log";

const INTERNAL = 'relation "chat_secret" does not exist at /srv/fold/lib/db/queries/chats.ts';
const outage = () => Object.assign(new Error("PGlite is closed"), {});

afterEach(() => vi.restoreAllMocks());

describe("errorResponse: the one mapping from a failure to a response", () => {
  it("answers an AppError with its own status, code and message", async () => {
    const response = errorResponse(new AppError("not_found:chat", "Chat not found."));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: { code: "not_found:chat", message: "Chat not found." },
    });
  });

  it("answers an unexpected error with 500 and an error id, logging the details under that id", async () => {
    const logged = vi.spyOn(log, "error").mockImplementation(() => undefined);
    const error = new Error(INTERNAL);
    const response = errorResponse(error, { path: "/api/chats" });
    expect(response.status).toBe(500);
    const body = (await response.json()) as {
      error: { code: string; message: string; errorId: string };
    };
    expect(body.error.code).toBe("internal");
    expect(body.error.errorId).toMatch(/^[0-9a-f]{12}$/);
    expect(body.error.message).toContain(body.error.errorId);
    expect(JSON.stringify(body)).not.toContain("chat_secret");
    expect(logged).toHaveBeenCalledWith(
      expect.objectContaining({ err: error, errorId: body.error.errorId, path: "/api/chats" }),
      "unhandled route error",
    );
  });

  it("answers a database outage with 503 unavailable:database and Retry-After", async () => {
    vi.spyOn(log, "warn").mockImplementation(() => undefined);
    const response = errorResponse(outage());
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe(String(DATABASE_RETRY_AFTER_S));
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("unavailable:database");
    expect(body.error.message).toMatch(/can't reach its database/);
    expect(body.error.message).not.toMatch(/PGlite/);
  });

  it("answers a write that names an account deleted meanwhile with 401, not 500", async () => {
    const refused = Object.assign(new Error("insert violates foreign key constraint"), {
      code: "23503",
      constraint: "quota_default_updated_by_user_id_fk",
    });
    const response = errorResponse(new Error("Failed query", { cause: refused }));
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      "unauthorized:auth",
    );
    // A chat's key still means the chat is gone.
    const chatGone = Object.assign(new Error("fk"), {
      code: "23503",
      constraint: "message_chat_id_chat_id_fk",
    });
    expect(errorResponse(chatGone).status).toBe(404);
  });

  it("sends Retry-After for any AppError that sets one", () => {
    const response = new AppError("too_many_requests:turns", "Slow down.", {
      retryAfterSeconds: 30,
    }).toResponse();
    expect(response.headers.get("retry-after")).toBe("30");
  });
});

describe("what users read of an unexpected failure", () => {
  it("is a short cause and an error id, never the internal text", () => {
    vi.spyOn(log, "error").mockImplementation(() => undefined);
    const text = publicErrorText(new Error(INTERNAL));
    expect(text).toMatch(/^Something went wrong on Fold's side \(error id [0-9a-f]{12}\)/);
    expect(text).not.toContain("chat_secret");
    expect(publicErrorText(outage())).toMatch(/^Fold can't reach its database \(error id /);
    expect(publicErrorText(new AppError("conflict:chat", "This chat is busy."))).toBe(
      "This chat is busy.",
    );
  });

  it("is what a failed turn streams: the reply failed, a cause and the id", () => {
    const logged = vi.spyOn(log, "error").mockImplementation(() => undefined);
    const text = describeModelError(new Error(INTERNAL));
    expect(text).toMatch(/^The reply failed: Something went wrong on Fold's side \(error id /);
    expect(text).not.toContain("chat_secret");
    expect(logged).toHaveBeenCalledTimes(1);
    // A database outage mid-turn is not mistaken for the provider being unreachable.
    const dbDown = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    const wrapped = new DrizzleQueryError("select 1", [], dbDown);
    expect(describeModelError(wrapped)).toMatch(/Fold can't reach its database \(error id /);
  });

  it("never names the provider's address when the provider could not be reached", () => {
    // What the AI SDK throws when the connection is refused: no status, the socket's words.
    const refused = new APICallError({
      message: "Cannot connect to API: connect ECONNREFUSED 10.0.0.9:11434",
      cause: Object.assign(new Error("connect ECONNREFUSED 10.0.0.9:11434"), {
        code: "ECONNREFUSED",
      }),
      url: "http://10.0.0.9:11434/v1/chat/completions",
      requestBodyValues: {},
      isRetryable: true,
    });
    for (const error of [
      refused,
      new RetryError({ message: "x", reason: "maxRetriesExceeded", errors: [refused] }),
    ]) {
      const text = describeModelError(error);
      expect(text).toMatch(/^Fold could not reach the model provider/);
      expect(text).not.toMatch(/10\.0\.0\.9|11434/);
    }
    // A provider that answered says why in its own words, with its status.
    const refusedWithStatus = new APICallError({
      message: "Bad Request",
      url: "http://10.0.0.9:11434/v1/chat/completions",
      requestBodyValues: {},
      statusCode: 400,
      responseBody: JSON.stringify({ error: { message: "unknown model 'qwen9'" } }),
    });
    expect(describeModelError(refusedWithStatus)).toMatch(/refused the request \(400\)/);
  });

  it("says a reply whose connection dropped after the provider answered 200 could not reach it, not that it was refused", () => {
    // What the AI SDK throws when the provider's process dies mid-stream.
    const dropped = new APICallError({
      message: "Failed to process successful response",
      cause: new TypeError("terminated", { cause: new Error("other side closed") }),
      url: "http://10.0.0.9:11434/v1/chat/completions",
      requestBodyValues: {},
      statusCode: 200,
    });
    const text = describeModelError(dropped);
    expect(text).toMatch(/^Fold could not reach the model provider, or the connection dropped/);
    expect(text).not.toMatch(/refused|200/);
    // A 200 whose body the SDK could not read as the API's is no dropped connection.
    const unreadable = new APICallError({
      message: "Invalid JSON response",
      url: "http://10.0.0.9:11434/chat/completions",
      requestBodyValues: {},
      statusCode: 200,
      responseBody: "<html>Welcome to the proxy</html>",
    });
    expect(describeModelError(unreadable)).toMatch(
      /^The model provider answered in a form Fold could not read \(200\).*Check its base URL\.$/,
    );
  });

  it("says a provider that is loading its model or overloaded is not ready, in its words", () => {
    const answered = (statusCode: number, body: unknown) =>
      new APICallError({
        message: "Service Unavailable",
        url: "http://127.0.0.1:8080/v1/chat/completions",
        requestBodyValues: {},
        statusCode,
        responseBody: JSON.stringify(body),
        isRetryable: true,
      });
    // llama.cpp while it loads a model; Anthropic when overloaded.
    const loading = answered(503, {
      error: { code: 503, message: "Loading model", type: "unavailable_error" },
    });
    const overloaded = answered(529, {
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    });
    expect(
      describeModelError(
        new RetryError({ message: "x", reason: "maxRetriesExceeded", errors: [loading] }),
      ),
    ).toBe(
      "The model provider is busy or still loading the model (503: Loading model). Retry in a moment.",
    );
    expect(describeModelError(overloaded)).toBe(
      "The model provider is busy or still loading the model (529: Overloaded). Retry in a moment.",
    );
    // Any other failure of the provider's own stays an internal error, its text unshown.
    expect(describeModelError(answered(500, { error: { message: "panic at slot.cpp:12" } }))).toBe(
      "The model provider had an internal error (500). Retry in a moment.",
    );
  });
});
