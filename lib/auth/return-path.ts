/**
 * The page a signed-out visitor asked for, carried through sign-in: the proxy names each page
 * request's path in a header, a page that needs an account sends the visitor to
 * `/login?next=<path>`, and the form goes there once signed in. Only a path on this server is
 * taken, so a link cannot send someone elsewhere after they sign in.
 */

/** The request header in which proxy.ts names the page asked for (path and query). */
export const PAGE_PATH_HEADER = "x-fold-page";

const MAX_PATH_CHARS = 2_000;

/** Pages that are no place to return to: the sign-in pages themselves. */
const AUTH_PAGES = /^\/(login|register|waiting)(?:[/?#]|$)/;

/**
 * `value` as a page of this server to return to, or null: a path that starts with one slash
 * (not `//` or `/\`, which browsers read as another host), without control characters.
 */
export function returnPath(value: unknown): string | null {
  if (typeof value !== "string" || value.length > MAX_PATH_CHARS) return null;
  if (!value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (/[\u0000-\u001f\u007f]/.test(value)) return null;
  if (value === "/" || AUTH_PAGES.test(value)) return null;
  return value;
}

/** Where a page that needs an account sends a signed-out visitor who asked for `path`. */
export function signInHref(path: string | null, page = "/login"): string {
  return path ? `${page}?next=${encodeURIComponent(path)}` : page;
}

/** The sign-in page's `?reason=` for a browser whose account was disabled while signed in. */
export const DISABLED_REASON = "disabled";

/** The code of the 403 an API call of a disabled account gets (lib/auth/account-status.ts). */
export const ACCOUNT_DISABLED_CODE = "forbidden:account_disabled";

/** `signInHref` for a browser whose session a disable ended: the sign-in page says why. */
export function disabledSignInHref(path: string | null): string {
  const href = signInHref(path);
  return `${href}${href.includes("?") ? "&" : "?"}reason=${DISABLED_REASON}`;
}
