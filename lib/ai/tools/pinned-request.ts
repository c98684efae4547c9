import type { LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { Readable } from "node:stream";
import { decodeBody, isContentCoding, UndecodableBodyError } from "./content-coding";

/**
 * One GET over node:http(s) that connects only to addresses already vetted by
 * the caller. Resolving once and pinning the socket to that answer closes the
 * DNS-rebinding gap a check-then-fetch would leave (the name resolving to a
 * public address for the check and to 127.0.0.1 for the connection).
 * Redirects are not followed; the caller vets every hop.
 */

export type PinnedRequestInit = {
  addresses: readonly LookupAddress[];
  headers: Record<string, string>;
  signal: AbortSignal;
};

/** Statuses whose Response must have a null body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : options.family;
    const candidates = family ? addresses.filter((a) => a.family === family) : [...addresses];
    const first = candidates[0];
    if (options.all) callback(null, candidates);
    else if (first) callback(null, first.address, first.family);
    else {
      const error: NodeJS.ErrnoException = new Error(`no vetted address for ${hostname}`);
      error.code = "ENOTFOUND";
      callback(error, "");
    }
  };
}

function toHeaders(rawHeaders: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const [name, value] = [rawHeaders[i], rawHeaders[i + 1]];
    if (name && value !== undefined) headers.append(name, value);
  }
  return headers;
}

function decodedBody(res: http.IncomingMessage, headers: Headers) {
  const body = Readable.toWeb(res) as ReadableStream<Uint8Array>;
  const coding = headers.get("content-encoding")?.trim().toLowerCase();
  if (!coding || coding === "identity") return body;
  if (!isContentCoding(coding)) {
    res.destroy();
    throw new UndecodableBodyError(`unsupported content encoding "${coding}"`);
  }
  headers.delete("content-encoding");
  headers.delete("content-length");
  return decodeBody(body, coding);
}

export function pinnedRequest(url: URL, init: PinnedRequestInit): Promise<Response> {
  const client = url.protocol === "https:" ? https : http;
  return new Promise<Response>((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: "GET",
        headers: { ...init.headers, "accept-encoding": "gzip, deflate" },
        signal: init.signal,
        lookup: pinnedLookup(init.addresses),
        // No pooled keep-alive sockets: each hop gets a connection to its own vetted address.
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 599) {
          res.destroy();
          reject(new Error(`unexpected HTTP status ${status}`));
          return;
        }
        const headers = toHeaders(res.rawHeaders);
        try {
          const body = NULL_BODY_STATUSES.has(status) ? null : decodedBody(res, headers);
          if (!body) res.destroy();
          resolve(new Response(body, { status, statusText: res.statusMessage ?? "", headers }));
        } catch (error) {
          reject(error);
        }
      },
    );
    request.on("error", reject);
    request.end();
  });
}
