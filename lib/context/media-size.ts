/**
 * Byte sizes of file data in any of the AI SDK's shapes, found without decoding
 * or copying it: the estimator prices files by size and never reads their bytes.
 */

export function isTagged<T extends string>(
  value: unknown,
  tag: T,
): value is { type: T } & Record<string, unknown> {
  return typeof value === "object" && value !== null && "type" in value && value.type === tag;
}

export function byteSizeOf(data: unknown): number | undefined {
  if (typeof data === "string") return byteSizeOfString(data);
  if (data instanceof URL) return byteSizeOfUrl(data.href);
  if (data instanceof Uint8Array || data instanceof ArrayBuffer) return data.byteLength;
  if (isTagged(data, "data")) return byteSizeOf(data.data);
  if (isTagged(data, "url") && data.url instanceof URL) return byteSizeOfUrl(data.url.href);
  return undefined; // provider references: the provider knows, we do not
}

/** A bare string is a data URL, a hosted URL (size unknown) or base64. */
function byteSizeOfString(value: string): number | undefined {
  if (value.startsWith("data:") || /^https?:\/\//i.test(value)) return byteSizeOfUrl(value);
  return base64Bytes(value);
}

/** Only data URLs have a knowable size; hosted files are fetched by the provider. */
export function byteSizeOfUrl(url: string): number | undefined {
  if (!url.startsWith("data:")) return undefined;
  const comma = url.indexOf(",");
  if (comma < 0) return undefined;
  const payloadLength = url.length - comma - 1;
  const isBase64 = url.slice(0, comma).endsWith(";base64");
  return isBase64 ? base64Bytes(url, comma + 1) : payloadLength;
}

/** Decoded size of base64 text (from `start`), computed from its length alone. */
export function base64Bytes(value: string, start = 0): number {
  let length = value.length - start;
  if (value.endsWith("==")) length -= 2;
  else if (value.endsWith("=")) length -= 1;
  return Math.floor((Math.max(0, length) * 3) / 4);
}
