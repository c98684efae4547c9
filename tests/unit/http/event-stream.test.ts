import { UI_MESSAGE_STREAM_HEADERS } from "ai";
import { describe, expect, it } from "vitest";
import { untransformedEventStream } from "@/lib/http/event-stream";

const events = () =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('data: {"type":"start"}\n\n'));
      controller.close();
    },
  });

describe("untransformedEventStream", () => {
  it("marks an AI SDK event stream no-transform and keeps its other headers, status and body", async () => {
    const response = untransformedEventStream(
      new Response(events(), { status: 200, headers: UI_MESSAGE_STREAM_HEADERS }),
    );
    expect(response.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(response.headers.get("x-accel-buffering")).toBe("no");
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('data: {"type":"start"}\n\n');
  });

  it("adds no-transform to an event stream without a cache-control header", () => {
    const response = untransformedEventStream(
      new Response(events(), { headers: { "content-type": "text/event-stream; charset=utf-8" } }),
    );
    expect(response.headers.get("cache-control")).toBe("no-transform");
  });

  it("leaves an event stream that already says no-transform as it is", () => {
    const original = new Response(events(), {
      headers: { "content-type": "text/event-stream", "cache-control": "No-Transform" },
    });
    expect(untransformedEventStream(original)).toBe(original);
  });

  it("leaves other responses (JSON, pages) to Next's compression", () => {
    const json = Response.json({ ok: true });
    expect(untransformedEventStream(json)).toBe(json);
    expect(json.headers.get("cache-control")).toBeNull();
  });
});
