import { describe, expect, it } from "vitest";
import { readBodyText } from "@/lib/http/body";

function streamed(chunks: Uint8Array[], counter?: { pulled: number }) {
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[i++];
      if (!chunk) return controller.close();
      if (counter) counter.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return new Request("http://x/api", { method: "POST", body, duplex: "half" } as RequestInit);
}

const bytes = (text: string) => new TextEncoder().encode(text);

async function failure(promise: Promise<unknown>) {
  return promise.then(
    () => null,
    (error: unknown) => error as { code: string; message: string },
  );
}

describe("readBodyText", () => {
  it("joins a body that arrives in pieces, even a character split across two", async () => {
    const euro = bytes("€");
    const request = streamed([bytes('{"a":"'), euro.slice(0, 1), euro.slice(1), bytes('"}')]);
    expect(await readBodyText(request, 100)).toBe('{"a":"€"}');
  });

  it("stops reading at the first chunk past the limit, with no Content-Length to go by", async () => {
    const counter = { pulled: 0 };
    const chunk = new Uint8Array(1000);
    const request = streamed(
      Array.from({ length: 50 }, () => chunk),
      counter,
    );
    expect(request.headers.get("content-length")).toBeNull();
    expect(await failure(readBodyText(request, 2500))).toMatchObject({
      code: "payload_too_large:body",
    });
    expect(counter.pulled).toBeLessThanOrEqual(4000);
  });

  it("refuses at once a body whose declared length is over the limit", async () => {
    const request = new Request("http://x/api", {
      method: "POST",
      body: "x".repeat(50),
      headers: { "content-length": "50" },
    });
    expect(await failure(readBodyText(request, 10))).toMatchObject({
      code: "payload_too_large:body",
    });
  });

  it("refuses bytes that are not UTF-8 instead of replacing them", async () => {
    const request = streamed([new Uint8Array([0x22, 0xff, 0xfe, 0x22])]);
    expect(await failure(readBodyText(request, 100))).toMatchObject({
      code: "bad_request:body",
      message: "The request body is not valid UTF-8.",
    });
  });

  it("refuses a body that ends in the middle of a character", async () => {
    const request = streamed([bytes("ok"), bytes("€").slice(0, 2)]);
    expect(await failure(readBodyText(request, 100))).toMatchObject({ code: "bad_request:body" });
  });

  it("reads an absent body as empty", async () => {
    expect(await readBodyText(new Request("http://x/api", { method: "DELETE" }), 10)).toBe("");
  });
});
