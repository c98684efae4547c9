/**
 * Response headers that keep Fold's pages from being framed, sniffed or scripted from
 * elsewhere. Pages get a Content-Security-Policy with a fresh nonce per request (proxy.ts):
 * Next puts it on its own scripts, so nothing else runs. Styles may be inline (React and
 * Radix set style attributes); they cannot run code.
 */

export const NONCE_HEADER = "x-nonce";

/** The page policy for one request; development adds what React's dev tooling needs. */
export function contentSecurityPolicy(nonce: string, dev: boolean): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' blob: data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** 128 random bits, base64: unguessable per response, as CSP nonces must be. */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}

/** On every response (next.config.ts). */
export const SECURITY_HEADERS = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  // Chat URLs and ids stay on Fold when a user follows a link out of a reply.
  { key: "Referrer-Policy", value: "same-origin" },
  { key: "X-Frame-Options", value: "DENY" },
];

/** API responses are data, never documents: nothing in them may load or run. */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";
