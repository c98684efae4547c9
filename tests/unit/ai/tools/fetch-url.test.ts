import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { createFetchUrlTool, FETCH_URL_MAX_TEXT_CHARS, fetchUrl } from "@/lib/ai/tools/fetch-url";
import { expectFailure, fakeLookup } from "./fetch-doubles";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const servers: Server[] = [];

/** A real HTTP server on 127.0.0.1; its base URL has no trailing slash. */
async function serve(handler: Handler): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe("fetch_url against a local server (allowPrivate)", () => {
  it("returns the readable text and title of an HTML page", async () => {
    const base = await serve((_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(
        "<html><head><title>Local page</title><script>track()</script></head>" +
          '<body><h1>Hello</h1><p>First paragraph with a <a href="/next">link</a>.</p>' +
          "<ul><li>one</li><li>two</li></ul></body></html>",
      );
    });
    const result = await fetchUrl(`${base}/page`, { allowPrivate: true });
    expect(result).toEqual({
      url: `${base}/page`,
      finalUrl: `${base}/page`,
      status: 200,
      contentType: "text/html",
      title: "Local page",
      text: `## Hello\n\nFirst paragraph with a link (${base}/next).\n\n- one\n- two`,
      truncated: false,
    });
  });

  it("follows a real redirect and reports the final URL", async () => {
    const base = await serve((req, res) => {
      if (req.url === "/old") {
        res.writeHead(301, { location: "/new" }).end();
        return;
      }
      res.setHeader("content-type", "text/plain");
      res.end(`you are at ${req.url}`);
    });
    const result = await fetchUrl(`${base}/old`, { allowPrivate: true });
    expect(result.finalUrl).toBe(`${base}/new`);
    expect(result.text).toBe("you are at /new");
  });

  it("connects to the vetted address, not to whatever the name resolves to later", async () => {
    const base = await serve((req, res) => {
      res.setHeader("content-type", "text/plain");
      res.end(`host header: ${req.headers.host}`);
    });
    const port = new URL(base).port;
    // `pinned.test` exists only in the injected lookup, so reaching the server proves the
    // socket used the address from the vetting step rather than a second DNS query.
    const lookup = fakeLookup({ "pinned.test": ["127.0.0.1"] });
    const result = await fetchUrl(`http://pinned.test:${port}/`, { allowPrivate: true, lookup });
    expect(result.text).toBe(`host header: pinned.test:${port}`);
    expect(lookup.calls).toEqual(["pinned.test"]);
  });

  it("gives up after five redirects", async () => {
    const base = await serve((req, res) => {
      const n = Number(req.url?.slice(1) ?? 0);
      res.writeHead(302, { location: `/${n + 1}` }).end();
    });
    await expectFailure(
      fetchUrl(`${base}/0`, { allowPrivate: true }),
      "too_many_redirects",
      /after 5 redirects \(last: .+\/5\)/,
    );
  });

  it("pretty-prints JSON", async () => {
    const base = await serve((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end('{"name":"Ada","langs":["en","fr"],"n":1}');
    });
    const result = await fetchUrl(`${base}/data`, { allowPrivate: true });
    expect(result.contentType).toBe("application/json");
    expect(result.text).toBe(JSON.stringify({ name: "Ada", langs: ["en", "fr"], n: 1 }, null, 2));
  });

  it("returns a 404 as a result with its status instead of throwing", async () => {
    const base = await serve((_req, res) => {
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<title>Missing</title><p>No such page.</p>");
    });
    const result = await fetchUrl(`${base}/missing`, { allowPrivate: true });
    expect(result.status).toBe(404);
    expect(result.text).toBe("HTTP 404 Not Found\n\nNo such page.");
    expect(result.truncated).toBe(false);
  });

  it("names an unsupported content type instead of returning its bytes", async () => {
    const base = await serve((_req, res) => {
      res.setHeader("content-type", "image/png");
      res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]));
    });
    const result = await fetchUrl(`${base}/logo.png`, { allowPrivate: true });
    expect(result.contentType).toBe("image/png");
    expect(result.text).toMatch(/cannot read image\/png content/);
  });

  it("tells the model when a page had more elements than are read", async () => {
    const paragraphs = Array.from({ length: 30_000 }, (_, i) => `<p>p${i}</p>`).join("");
    const base = await serve((_req, res) => {
      res.setHeader("content-type", "text/html");
      res.end(`<html><body>${paragraphs}</body></html>`);
    });
    const result = await fetchUrl(`${base}/many`, { allowPrivate: true });
    expect(result.truncated).toBe(true);
    expect(result.text).toContain("read the first 20,000 elements of the page");
  });

  it("stops reading an endless body at the byte cap", async () => {
    const base = await serve((_req, res) => {
      res.setHeader("content-type", "text/plain");
      const chunk = "x".repeat(16 * 1024);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
    });
    const result = await fetchUrl(`${base}/endless`, { allowPrivate: true, maxBytes: 10_000 });
    expect(result.truncated).toBe(true);
    expect(result.text).toBe(
      `${"x".repeat(10_000)}\n\n[Truncated: stopped reading after 10,000 bytes.]`,
    );
  });

  it("caps the returned text and says how much there was", async () => {
    const words = "lorem ipsum ".repeat(5_000).trim();
    const base = await serve((_req, res) => {
      res.setHeader("content-type", "text/plain");
      res.end(words);
    });
    const result = await fetchUrl(`${base}/long`, { allowPrivate: true });
    expect(result.truncated).toBe(true);
    expect(result.text.startsWith(words.slice(0, FETCH_URL_MAX_TEXT_CHARS))).toBe(true);
    expect(result.text).toMatch(/\[Truncated: showing the first 20,000 of 59,999 characters\.\]$/);
  });

  it("times out on a server that never answers", async () => {
    const base = await serve(() => {});
    const started = Date.now();
    await expectFailure(
      fetchUrl(`${base}/hang`, { allowPrivate: true, timeoutMs: 150 }),
      "timeout",
      /timed out after 150 ms/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("times out on a body that stalls halfway", async () => {
    const base = await serve((_req, res) => {
      res.setHeader("content-type", "text/plain");
      res.write("partial");
    });
    await expectFailure(
      fetchUrl(`${base}/stall`, { allowPrivate: true, timeoutMs: 150 }),
      "timeout",
      /timed out/,
    );
  });

  it("reports a refused connection as a network error", async () => {
    // Listen, note the port, stop listening: nothing answers there any more.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    await expectFailure(
      fetchUrl(`http://127.0.0.1:${port}/`, { allowPrivate: true }),
      "network",
      /Could not fetch .+ECONNREFUSED/,
    );
  });

  it("reads a body sent without a content type as HTML or text by its look", async () => {
    const base = await serve((req, res) => {
      res.end(req.url === "/html" ? "<!DOCTYPE html><title>T</title><p>Hi</p>" : "just text");
    });
    expect(await fetchUrl(`${base}/html`, { allowPrivate: true })).toMatchObject({
      contentType: "unknown",
      title: "T",
      text: "Hi",
    });
    expect((await fetchUrl(`${base}/plain`, { allowPrivate: true })).text).toBe("just text");
  });

  it("decodes gzip bodies and declared charsets", async () => {
    const base = await serve((req, res) => {
      if (req.url === "/gzip") {
        res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
        res.end(gzipSync("compressed text"));
        return;
      }
      res.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" });
      res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9])); // "café" in Latin-1
    });
    expect((await fetchUrl(`${base}/gzip`, { allowPrivate: true })).text).toBe("compressed text");
    expect((await fetchUrl(`${base}/latin1`, { allowPrivate: true })).text).toBe("café");
  });

  it("decodes deflate bodies sent zlib-wrapped, raw (without the zlib header) or empty", async () => {
    const base = await serve((req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-encoding": "deflate" });
      if (req.url === "/zlib") res.end(deflateSync("zlib-wrapped text"));
      else if (req.url === "/raw") {
        // The first byte alone: the format is told from two bytes that arrive in two chunks.
        const raw = deflateRawSync("raw deflate text");
        res.write(raw.subarray(0, 1));
        setTimeout(() => res.end(raw.subarray(1)), 20);
      } else res.end();
    });
    const read = async (path: string) =>
      (await fetchUrl(`${base}${path}`, { allowPrivate: true })).text;
    expect(await read("/zlib")).toBe("zlib-wrapped text");
    expect(await read("/raw")).toBe("raw deflate text");
    expect(await read("/empty")).toBe("");
  });

  it("names a body that is not in its declared content encoding instead of blaming the network", async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-encoding": "deflate" });
      res.end("plain text, not deflated at all");
    });
    await expectFailure(
      fetchUrl(`${base}/mislabelled`, { allowPrivate: true }),
      "undecodable_body",
      /^Could not read .+: the body is not valid deflate data, though its Content-Encoding says so\.$/,
    );
  });
});

describe("the fetch_url tool", () => {
  const callOptions = (abortSignal?: AbortSignal) => ({
    toolCallId: "call-1",
    messages: [],
    context: {},
    abortSignal,
  });

  it("refuses private addresses by default (FETCH_URL_ALLOW_PRIVATE is off)", async () => {
    const tool = createFetchUrlTool();
    await expectFailure(
      Promise.resolve(tool.execute({ url: "http://127.0.0.1:1/" }, callOptions())),
      "refused",
      /loopback/,
    );
  });

  it("stops when the tool call is aborted", async () => {
    const base = await serve(() => {});
    const controller = new AbortController();
    const tool = createFetchUrlTool({ allowPrivate: true });
    const pending = Promise.resolve(
      tool.execute({ url: `${base}/hang` }, callOptions(controller.signal)),
    );
    setTimeout(() => controller.abort(), 50);
    await expectFailure(pending, "aborted", /was cancelled/);
  });
});
