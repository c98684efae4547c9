import { afterEach, describe, expect, it, vi } from "vitest";
import { AppError } from "@/lib/errors";
import { route } from "@/lib/http/route";
import { log } from "@/lib/log";

afterEach(() => vi.restoreAllMocks());

/** What Next aborts a request's signal with when its client disconnects. */
class ResponseAborted extends Error {
  override name = "ResponseAborted";
}

describe("a route whose client goes away mid-request", () => {
  it("is noted, not reported as a server error", async () => {
    const errors = vi.spyOn(log, "error").mockImplementation(() => undefined);
    const infos = vi.spyOn(log, "info").mockImplementation(() => undefined);
    const gone = new AbortController();
    const handler = route(async (request) => {
      gone.abort(new ResponseAborted());
      throw request.signal.reason;
    });
    const response = await handler(
      new Request("http://fold.test/api/models", { signal: gone.signal }),
      { params: Promise.resolve({}) },
    );
    expect(response.status).toBe(499);
    expect(errors).not.toHaveBeenCalled();
    expect(infos).toHaveBeenCalledWith(
      expect.objectContaining({ path: "/api/models" }),
      "the client went away before its answer",
    );
  });

  it("answers a failure of its own as it would, even once the client is gone", async () => {
    const gone = new AbortController();
    gone.abort(new ResponseAborted());
    const handler = route(async () => {
      throw new AppError("not_found:chat", "Chat not found.");
    });
    const response = await handler(
      new Request("http://fold.test/api/chats/x", { signal: gone.signal }),
      { params: Promise.resolve({}) },
    );
    expect(response.status).toBe(404);
  });
});
