/**
 * Browsers an account has signed in from before (a "device cookie"). The wrong-password limit
 * per account would otherwise let anyone who knows an address keep its owner out: ten wrong
 * guesses from anywhere and the right password waits too. A browser holding a cookie this
 * server signed for that account, after a right password, is counted on its own instead: what
 * strangers spend of the account's allowance does not hold it, and its own wrong passwords do
 * not hold the account for anyone else.
 *
 * The cookie holds, for each of the last few accounts signed in on that browser, a random id
 * and an HMAC of it with the account under the auth secret. It names no account: an entry is
 * recognized only by recomputing its HMAC for the account a sign-in names. It outlives
 * sessions (signing out keeps it) and is renewed on every right password.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { authSecret } from "@/lib/auth/secret";
import { marksSecure } from "@/lib/auth/secure-cookies";

export const SIGN_IN_DEVICE_COOKIE = "fold_sign_in_device";
/** How long a browser stays known without signing in again. */
const DEVICE_MAX_AGE_SECONDS = 365 * 24 * 60 * 60;
/** Accounts one browser is known for, most recent first: a shared computer holds a few. */
const MAX_ENTRIES = 4;
const ID_BYTES = 16;
const ENTRY_SEPARATOR = "~";
/** Only better-auth's routes read it. */
const COOKIE_PATH = "/api/auth";

const macOf = (account: string, id: string) =>
  createHmac("sha256", authSecret()).update(`sign-in-device\n${account}\n${id}`).digest();

function entriesOf(cookieHeader: string | null): string[] {
  for (const pair of (cookieHeader ?? "").split(";")) {
    const at = pair.indexOf("=");
    if (at < 0 || pair.slice(0, at).trim() !== SIGN_IN_DEVICE_COOKIE) continue;
    return pair
      .slice(at + 1)
      .trim()
      .split(ENTRY_SEPARATOR)
      .filter(Boolean)
      .slice(0, MAX_ENTRIES);
  }
  return [];
}

/** Whether a cookie entry (`id.mac`) was signed for `account`. */
function signedFor(entry: string, account: string): boolean {
  const [id, mac, extra] = entry.split(".");
  if (!id || !mac || extra !== undefined) return false;
  const given = Buffer.from(mac, "base64url");
  const expected = macOf(account, id);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The id of this browser for `account` (the key of its own wrong-password count), or null when it is not known for it. */
export function signInDevice(headers: Headers, account: string): string | null {
  const entry = entriesOf(headers.get("cookie")).find((e) => signedFor(e, account));
  return entry?.split(".")[0] ?? null;
}

/**
 * The Set-Cookie value after a right password for `account`: a new entry for it first, the
 * browser's other accounts' after it (this account's old entry dropped). `secure` as the
 * session cookie the same answer sets.
 */
export function signInDeviceCookie(headers: Headers, account: string, secure: boolean): string {
  const id = randomBytes(ID_BYTES).toString("base64url");
  const entry = `${id}.${macOf(account, id).toString("base64url")}`;
  const others = entriesOf(headers.get("cookie")).filter((e) => !signedFor(e, account));
  const value = [entry, ...others].slice(0, MAX_ENTRIES).join(ENTRY_SEPARATOR);
  const attributes = [
    `${SIGN_IN_DEVICE_COOKIE}=${value}`,
    `Path=${COOKIE_PATH}`,
    `Max-Age=${DEVICE_MAX_AGE_SECONDS}`,
    "HttpOnly",
    "SameSite=Lax",
  ];
  if (secure) attributes.push("Secure");
  return attributes.join("; ");
}

/** better-auth's session cookie, as it names it with or without the `__Secure-` prefix. */
const SESSION_COOKIE = /^(__Secure-)?better-auth\.session_token=[^;]/;

/**
 * `response` with this browser remembered for `account` when it signed the browser in (a
 * right password, or a sign-up that opened a session: an answer that only looks like one,
 * for an address already taken, opens none), else as it is.
 */
export function rememberSignInDevice(
  request: Request,
  account: string | null,
  response: Response,
): Response {
  if (!account || response.status !== 200) return response;
  const session = response.headers.getSetCookie().find((c) => SESSION_COOKIE.test(c));
  if (!session) return response;
  const secure = marksSecure(session);
  const headers = new Headers(response.headers);
  headers.append("set-cookie", signInDeviceCookie(request.headers, account, secure));
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}
