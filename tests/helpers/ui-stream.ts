/** Reads a UI message stream response (SSE) into its JSON chunks. */
export async function readChunks(response: Response): Promise<Array<Record<string, unknown>>> {
  const text = await response.text();
  return text
    .split("\n\n")
    .map((event) => event.replace(/^data: /, "").trim())
    .filter((data) => data && data !== "[DONE]")
    .map((data) => JSON.parse(data) as Record<string, unknown>);
}

/** Polls until `check` holds (for work that finishes after the response, like persistence). */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A UI message stream's JSON chunks as they arrive (for stopping or resuming mid-reply). */
export async function* streamChunks(
  body: ReadableStream<Uint8Array> | ReadableStream<string>,
): AsyncGenerator<Record<string, unknown>> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const piece of body as AsyncIterable<Uint8Array | string>) {
    buffer += typeof piece === "string" ? piece : decoder.decode(piece, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const data = buffer
        .slice(0, end)
        .replace(/^data: /, "")
        .trim();
      buffer = buffer.slice(end + 2);
      if (data && data !== "[DONE]") yield JSON.parse(data) as Record<string, unknown>;
      end = buffer.indexOf("\n\n");
    }
  }
}

/**
 * Reads a streaming reply (a UI message stream) until its text has `minChars` characters, by
 * default until its first text delta. Returns the chunks read so far and the rest of the
 * stream: the reply streams on unread until `rest` is read, and `rest.return()` cancels it.
 */
export async function readUntilText(
  response: Response,
  minChars = 1,
): Promise<{
  seen: Array<Record<string, unknown>>;
  rest: AsyncGenerator<Record<string, unknown>>;
}> {
  if (!response.ok || !response.body) throw new Error(`the turn answered ${response.status}`);
  const rest = streamChunks(response.body);
  const seen: Array<Record<string, unknown>> = [];
  // next() by hand, not for-await: leaving a for-await loop would cancel the stream.
  while (textOf(seen).length < minChars) {
    const next = await rest.next();
    if (next.done) throw new Error(`the stream ended after ${textOf(seen).length} characters`);
    seen.push(next.value);
  }
  return { seen, rest };
}

/** The reply text in a list of UI message chunks. */
export function textOf(chunks: ReadonlyArray<Record<string, unknown>>): string {
  return chunks
    .filter((chunk) => chunk.type === "text-delta")
    .map((chunk) => chunk.delta)
    .join("");
}
