/**
 * A server-sent event stream must reach the browser event by event. `next start` gzips any
 * `text/*` response a client accepts gzip for, and an event stream then goes through zlib
 * one event at a time (a compress and a flush each, on the thread pool), which holds every
 * event back, the first text-delta included, and costs CPU for events too small to shrink.
 * `no-transform` is what Next's compression, and proxies that honour it, read as "leave this
 * body as it is".
 */

const EVENT_STREAM_TYPE = "text/event-stream";
const NO_TRANSFORM = /(?:^|,)\s*no-transform\s*(?:,|$)/i;

/** `response` unchanged, or, for an event stream, the same stream marked `no-transform`. */
export function untransformedEventStream(response: Response): Response {
  const type = response.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith(EVENT_STREAM_TYPE)) return response;
  const cacheControl = response.headers.get("cache-control");
  if (cacheControl && NO_TRANSFORM.test(cacheControl)) return response;
  // A new Response: headers of one that came from fetch() or Response.redirect() are read-only.
  const headers = new Headers(response.headers);
  headers.set("cache-control", cacheControl ? `${cacheControl}, no-transform` : "no-transform");
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}
