import { type PageText, pageText } from "./page-text";

/**
 * Turning an HTTP response body into text for the model: read at most
 * `maxBytes`, pick the charset, and render by content type.
 */

export type ContentKind = "html" | "json" | "text";

const TEXTUAL_APPLICATION_TYPES = new Set([
  "application/xml",
  "application/javascript",
  "application/ecmascript",
  "application/yaml",
  "application/x-yaml",
  "application/x-ndjson",
]);
/** Where HTML puts `<meta charset>`; the spec only looks this far too. */
const CHARSET_SNIFF_BYTES = 1024;

/** Lowercase media type without parameters, e.g. `text/html`. */
export const mediaType = (contentType: string | null) =>
  (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";

/** How to render a media type, or null for types fetch_url does not read (images, PDFs, archives). */
export function contentKind(type: string): ContentKind | null {
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type === "application/json" || type.endsWith("+json")) return "json";
  if (type.startsWith("text/") || type.endsWith("+xml") || TEXTUAL_APPLICATION_TYPES.has(type))
    return "text";
  return null;
}

/** Rejects as soon as `signal` aborts, even if `promise` never settles (DNS lookups, stalled reads). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Reads up to `maxBytes` and stops there; `capped` says whether more was on the wire. */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ bytes: Uint8Array; capped: boolean }> {
  if (!body) return { bytes: new Uint8Array(0), capped: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await abortable(reader.read(), signal);
      if (done) {
        finished = true;
        break;
      }
      if (size + value.byteLength > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - size));
        size = maxBytes;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    // Closes the connection instead of downloading the rest; a failure here changes nothing.
    if (!finished) reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, capped: !finished };
}

function charsetOf(contentType: string | null, bytes: Uint8Array, kind: ContentKind): string {
  const declared = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1];
  if (declared) return declared;
  if (kind === "html") {
    const head = new TextDecoder("latin1").decode(bytes.subarray(0, CHARSET_SNIFF_BYTES));
    const meta = /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(head)?.[1];
    if (meta) return meta;
  }
  return "utf-8";
}

export function decodeText(bytes: Uint8Array, contentType: string | null, kind: ContentKind) {
  try {
    return new TextDecoder(charsetOf(contentType, bytes, kind)).decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes); // unknown charset label
  }
}

/** Readable text and title of a decoded body. */
export function render(text: string, kind: ContentKind, baseUrl: string): PageText {
  if (kind === "html") return pageText(text, { baseUrl });
  if (kind === "json") {
    try {
      return { text: JSON.stringify(JSON.parse(text), null, 2) };
    } catch {
      return { text }; // malformed or cut off at the byte cap: show it as sent
    }
  }
  return { text };
}

/** A body sent without a Content-Type: HTML if it says so, text unless it looks binary. */
export function sniffKind(text: string): ContentKind | null {
  if (text.includes("\u0000")) return null;
  return /^\s*<(!doctype\s+html|html[\s>])/i.test(text) ? "html" : "text";
}
