/**
 * Undoing a response's Content-Encoding. The bytes are read through DecompressionStream; a body
 * that is not in the coding it claims fails its reads with UndecodableBodyError, so the caller
 * can tell a bad body from a failed connection.
 */

/** Content codings this client asks for and can undo, with the format that undoes each. */
export const CONTENT_CODINGS = { gzip: "gzip", "x-gzip": "gzip", deflate: "deflate" } as const;
export type ContentCoding = keyof typeof CONTENT_CODINGS;

/** A zlib header is two bytes; reading that far ahead tells zlib-wrapped deflate from raw. */
const ZLIB_HEADER_BYTES = 2;

/** A body its Content-Encoding does not undo: an unsupported coding, or bytes not in that coding. */
export class UndecodableBodyError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "UndecodableBodyError";
  }
}

export function isContentCoding(coding: string): coding is ContentCoding {
  return Object.hasOwn(CONTENT_CODINGS, coding);
}

/**
 * The format a deflate body is in. HTTP's deflate is zlib-wrapped (RFC 9110), but some servers send
 * the raw stream. A zlib header names method 8 in the low bits of its first byte, and its two bytes
 * read as one big-endian number are a multiple of 31.
 */
export function deflateFormat(head: Uint8Array): "deflate" | "deflate-raw" {
  const [first = 0, second = 0] = head;
  const zlib = head.length >= 2 && (first & 0x0f) === 8 && (first * 256 + second) % 31 === 0;
  return zlib ? "deflate" : "deflate-raw";
}

type Read = () => Promise<ReadableStreamReadResult<Uint8Array>>;

/** Chunks off the wire until at least `bytes` have come, or the body ends first. */
async function readAhead(read: Read, bytes: number): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for (let size = 0; size < bytes; ) {
    const { done, value } = await read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  return chunks;
}

/** The wire's chunks, starting with the ones already read ahead. */
function replayed(ahead: Uint8Array[], read: Read, cancel: (reason: unknown) => Promise<void>) {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = ahead.shift() ?? (await read()).value;
      if (next) controller.enqueue(next);
      else controller.close();
    },
    cancel,
  });
}

/** Decoded chunks of the body, once enough of it has come to pick the format. */
async function decoder(
  coding: ContentCoding,
  read: Read,
  cancel: (reason: unknown) => Promise<void>,
) {
  const ahead = await readAhead(read, ZLIB_HEADER_BYTES);
  // An empty body has nothing to decode: there is no header to find, nor data to be wrong.
  if (ahead.length === 0)
    return new ReadableStream<Uint8Array>({
      start: (controller) => controller.close(),
    }).getReader();
  const format =
    coding === "deflate" ? deflateFormat(Buffer.concat(ahead)) : CONTENT_CODINGS[coding];
  const decompress = new DecompressionStream(format) as unknown as TransformStream<
    Uint8Array,
    Uint8Array
  >;
  return replayed(ahead, read, cancel).pipeThrough(decompress).getReader();
}

/**
 * `body` with `coding` undone. A read fails with UndecodableBodyError when the bytes are not in
 * that coding; a failure of the connection itself (a reset, an abort) is passed on as it was.
 */
export function decodeBody(
  body: ReadableStream<Uint8Array>,
  coding: ContentCoding,
): ReadableStream<Uint8Array> {
  const wire = body.getReader();
  let wireFailed = false;
  const read: Read = () =>
    wire.read().catch((reason: unknown) => {
      wireFailed = true;
      throw reason;
    });
  const cancelWire = (reason: unknown) => wire.cancel(reason);
  let decoded: ReadableStreamDefaultReader<Uint8Array> | undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        decoded ??= await decoder(coding, read, cancelWire);
        const { done, value } = await decoded.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        const message = `the body is not valid ${coding} data, though its Content-Encoding says so`;
        controller.error(wireFailed ? error : new UndecodableBodyError(message, { cause: error }));
      }
    },
    cancel: (reason) => (decoded ? decoded.cancel(reason) : cancelWire(reason)),
  });
}
