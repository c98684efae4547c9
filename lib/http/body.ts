import { AppError } from "@/lib/errors";

/**
 * A request body as text, with the size limit enforced while it arrives: bytes are counted
 * chunk by chunk and reading stops at the first byte over, so a body sent without (or with a
 * lying) Content-Length is never buffered whole. Bytes that are not UTF-8 are refused rather
 * than silently replaced.
 */
export async function readBodyText(request: Request, maxBytes: number): Promise<string> {
  const tooLarge = () =>
    new AppError("payload_too_large:body", `The request body is over ${maxBytes} bytes.`);
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw tooLarge();
  if (!request.body) return "";

  const reader = request.body.getReader();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const decode = (bytes?: Uint8Array) => {
    try {
      return bytes ? decoder.decode(bytes, { stream: true }) : decoder.decode();
    } catch {
      throw new AppError("bad_request:body", "The request body is not valid UTF-8.");
    }
  };
  let received = 0;
  let text = "";
  try {
    for (;;) {
      const chunk = await reader.read().catch((error: unknown) => {
        throw new AppError("bad_request:body", "The request body could not be read.", {
          cause: error,
        });
      });
      if (chunk.done) break;
      received += chunk.value.byteLength;
      if (received > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      text += decode(chunk.value);
    }
    return text + decode();
  } finally {
    reader.releaseLock();
  }
}
