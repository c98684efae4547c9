import type { LookupAddress } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { tool, zodSchema } from "ai";
import { z } from "zod";
import { env } from "@/lib/env";
import { headOf } from "@/lib/message/unstorable-text";
import { classifyAddress, serverAddresses } from "./address-policy";
import { UndecodableBodyError } from "./content-coding";
import { pinnedRequest } from "./pinned-request";
import {
  abortable,
  type ContentKind,
  contentKind,
  decodeText,
  mediaType,
  readCapped,
  render,
  sniffKind,
} from "./readable-body";

/**
 * `fetch_url`: GET an http(s) URL from the server and return readable text.
 * Every hop (the URL and each redirect target) is resolved and refused if any
 * address is not public (see address-policy.ts); by default the connection is
 * then pinned to exactly those addresses. Network failures, timeouts and
 * refusals throw, which the AI SDK hands to the model as a tool error; HTTP
 * error statuses are a normal result the model can read.
 */

export const FETCH_URL_TIMEOUT_MS = 10_000;
export const FETCH_URL_MAX_BYTES = 2 * 1024 * 1024;
/** ~5k tokens: enough for an article, small enough not to swamp the context window. */
export const FETCH_URL_MAX_TEXT_CHARS = 20_000;
export const FETCH_URL_MAX_REDIRECTS = 5;
export const FETCH_URL_MAX_URL_CHARS = 2048;
/** Error pages are quoted only briefly; the status is what matters. */
const ERROR_EXCERPT_CHARS = 1_000;
const USER_AGENT = "Fold/0.1 (fetch_url tool)";
const ACCEPT = "text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.1";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export type Lookup = (hostname: string, options: { all: true }) => Promise<LookupAddress[]>;

export type FetchUrlOptions = {
  /** Allow loopback, private and link-local targets (tests, self-hosted intranets). */
  allowPrivate?: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  /** Replaces the pinned node:http transport; addresses are still vetted before each hop. */
  fetch?: typeof fetch;
  lookup?: Lookup;
};

export const fetchUrlInputSchema = z.object({
  url: z
    .string()
    .max(FETCH_URL_MAX_URL_CHARS)
    .describe("Absolute http:// or https:// URL of the page or document to read"),
});
/** Converted to JSON Schema on first use and kept: the AI SDK would convert a bare zod schema on every request. */
const fetchUrlInputJsonSchema = zodSchema(fetchUrlInputSchema);

export type FetchUrlResult = {
  url: string;
  finalUrl: string;
  status: number;
  contentType: string;
  title?: string;
  text: string;
  truncated: boolean;
};

export type FetchUrlErrorReason =
  | "invalid_url"
  | "refused"
  | "network"
  | "timeout"
  | "aborted"
  | "too_many_redirects"
  | "undecodable_body";

export class FetchUrlError extends Error {
  readonly reason: FetchUrlErrorReason;

  constructor(reason: FetchUrlErrorReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "FetchUrlError";
    this.reason = reason;
  }
}

function parseHttpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new FetchUrlError("invalid_url", `"${text}" is not an absolute URL.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new FetchUrlError(
      "invalid_url",
      `Only http and https URLs can be fetched, not ${url.protocol} (${url.href}).`,
    );
  url.hash = "";
  return url;
}

/** The addresses `url` may be fetched from; throws when any of them is not public. */
async function vet(url: URL, signal: AbortSignal, options: FetchUrlOptions) {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  let addresses: LookupAddress[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    const lookup: Lookup = options.lookup ?? dnsLookup;
    try {
      addresses = await abortable(lookup(host, { all: true }), signal);
    } catch (error) {
      if (signal.aborted) throw error;
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new FetchUrlError("network", `Could not resolve ${host} (${code}).`, { cause: error });
    }
  }
  if (addresses.length === 0)
    throw new FetchUrlError("network", `Could not resolve ${host}: no addresses.`);
  if (options.allowPrivate) return addresses;
  const own = serverAddresses();
  for (const { address } of addresses) {
    const kind = classifyAddress(address, own);
    if (kind === null) continue;
    // A literal address is the caller's own; what a name resolves to is the server's network,
    // so neither the address nor its kind is told.
    const why =
      address === host
        ? `${host} is a ${kind} address`
        : `${host} resolves to an address outside the public internet`;
    throw new FetchUrlError(
      "refused",
      `Refused to fetch ${url.href}: ${why}. fetch_url only reaches public internet hosts.`,
    );
  }
  return addresses;
}

function send(
  url: URL,
  addresses: LookupAddress[],
  signal: AbortSignal,
  options: FetchUrlOptions,
): Promise<Response> {
  const headers = { "user-agent": USER_AGENT, accept: ACCEPT };
  if (options.fetch) return options.fetch(url.href, { redirect: "manual", signal, headers });
  return pinnedRequest(url, { addresses, headers, signal });
}

async function readResult(
  requested: string,
  finalUrl: URL,
  response: Response,
  signal: AbortSignal,
  maxBytes: number,
): Promise<FetchUrlResult> {
  const header = response.headers.get("content-type");
  const type = mediaType(header);
  const base = {
    url: requested,
    finalUrl: finalUrl.href,
    status: response.status,
    contentType: type || "unknown",
  };
  const statusLine = `HTTP ${response.status} ${response.statusText}`.trim();
  let kind: ContentKind | null = type ? contentKind(type) : "text";
  if (!kind) {
    await response.body?.cancel().catch(() => undefined);
    const text = response.ok
      ? `fetch_url cannot read ${type} content; it reads HTML, JSON and text only.`
      : statusLine;
    return { ...base, text, truncated: false };
  }

  const { bytes, capped } = await readCapped(response.body, maxBytes, signal);
  const decoded = decodeText(bytes, header, kind);
  if (!type) kind = sniffKind(decoded);
  if (!kind) return { ...base, text: "fetch_url cannot read binary content.", truncated: false };
  const page = render(decoded, kind, finalUrl.href);
  const title = page.title === undefined ? {} : { title: page.title };

  if (!response.ok) {
    const excerpt = headOf(page.text, ERROR_EXCERPT_CHARS);
    const text = excerpt ? `${statusLine}\n\n${excerpt}` : statusLine;
    return { ...base, ...title, text, truncated: excerpt.length < page.text.length || capped };
  }

  const notes: string[] = [];
  if (capped) notes.push(`stopped reading after ${maxBytes.toLocaleString("en-US")} bytes`);
  if (page.cutAtElements)
    notes.push(`read the first ${page.cutAtElements.toLocaleString("en-US")} elements of the page`);
  if (page.text.length > FETCH_URL_MAX_TEXT_CHARS)
    notes.push(
      `showing the first ${FETCH_URL_MAX_TEXT_CHARS.toLocaleString("en-US")} of ${page.text.length.toLocaleString("en-US")} characters`,
    );
  let text = headOf(page.text, FETCH_URL_MAX_TEXT_CHARS);
  if (!text && kind === "html") text = "(No readable text; the page may need JavaScript.)";
  if (notes.length > 0) text += `\n\n[Truncated: ${notes.join("; ")}.]`;
  return { ...base, ...title, text, truncated: notes.length > 0 };
}

function resolveLocation(location: string, from: URL): string {
  try {
    return new URL(location, from).href;
  } catch {
    throw new FetchUrlError(
      "invalid_url",
      `${from.href} redirected to an invalid URL "${location}".`,
    );
  }
}

async function fetchWithRedirects(
  requested: string,
  signal: AbortSignal,
  options: FetchUrlOptions,
): Promise<FetchUrlResult> {
  let url = parseHttpUrl(requested);
  for (let redirects = 0; ; redirects++) {
    const addresses = await vet(url, signal, options);
    const response = await abortable(send(url, addresses, signal, options), signal);
    const location = REDIRECT_STATUSES.has(response.status)
      ? response.headers.get("location")
      : null;
    if (!location)
      return readResult(requested, url, response, signal, options.maxBytes ?? FETCH_URL_MAX_BYTES);
    await response.body?.cancel().catch(() => undefined);
    if (redirects >= FETCH_URL_MAX_REDIRECTS)
      throw new FetchUrlError(
        "too_many_redirects",
        `Gave up on ${requested} after ${FETCH_URL_MAX_REDIRECTS} redirects (last: ${url.href}).`,
      );
    url = parseHttpUrl(resolveLocation(location, url));
  }
}

/** The socket's error code when there is one: its message names the address it dialed. */
function networkCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const code =
    (error as NodeJS.ErrnoException).code ?? (cause as NodeJS.ErrnoException | undefined)?.code;
  return code ?? error.message;
}

/**
 * Fetches `url` and returns its readable text. `allowPrivate` defaults to
 * false here; the tool factory defaults it from FETCH_URL_ALLOW_PRIVATE.
 */
export async function fetchUrl(
  url: string,
  options: FetchUrlOptions & { signal?: AbortSignal } = {},
): Promise<FetchUrlResult> {
  const timeoutMs = options.timeoutMs ?? FETCH_URL_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    return await fetchWithRedirects(url, signal, options);
  } catch (error) {
    if (error instanceof FetchUrlError) throw error;
    if (error instanceof UndecodableBodyError)
      throw new FetchUrlError("undecodable_body", `Could not read ${url}: ${error.message}.`, {
        cause: error,
      });
    if (options.signal?.aborted)
      throw new FetchUrlError("aborted", `Fetching ${url} was cancelled.`, { cause: error });
    if (timeout.aborted)
      throw new FetchUrlError("timeout", `Fetching ${url} timed out after ${timeoutMs} ms.`, {
        cause: error,
      });
    throw new FetchUrlError("network", `Could not fetch ${url}: ${networkCause(error)}.`, {
      cause: error,
    });
  }
}

export function createFetchUrlTool(options: FetchUrlOptions = {}) {
  const settings = { ...options, allowPrivate: options.allowPrivate ?? env().fetchUrlAllowPrivate };
  return tool({
    description:
      "Fetch a web page or document by URL (http/https) and return its readable text: HTML is " +
      "converted to plain text with its title, JSON is pretty-printed. Only public internet " +
      "hosts are reachable. Long pages are truncated.",
    inputSchema: fetchUrlInputJsonSchema,
    execute: ({ url }, { abortSignal }) => fetchUrl(url, { ...settings, signal: abortSignal }),
  });
}
