/** Bytes per chunk a stream of text pieces sends: small pieces go together, a large one alone. */
const CHUNK_BYTES = 64 * 1024;

/**
 * A response body of text made a piece at a time as the client reads it, so the whole text is
 * never one string in memory. A piece that throws errors the stream (the client sees the
 * download fail, not a file cut short that looks whole).
 */
export function textPiecesStream(pieces: Iterable<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = pieces[Symbol.iterator]();
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      let batch = "";
      while (batch.length < CHUNK_BYTES) {
        const next = iterator.next();
        if (next.done) {
          if (batch) controller.enqueue(encoder.encode(batch));
          controller.close();
          return;
        }
        batch += next.value;
      }
      controller.enqueue(encoder.encode(batch));
    },
    cancel() {
      iterator.return?.();
    },
  });
}
