/**
 * A session that ended because an admin disabled its account. Disabling deletes the account's
 * sessions at once (a later Enable must not bring them back), but each browser still holds its
 * session cookie: when it comes back, Fold finds the token's hash among those a disable ended
 * (`disabled_session`) and says why it was signed out, where it would otherwise just ask it to
 * sign in. Only that browser has the token, so no one else learns that the account was disabled.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { getSessionCookie } from "better-auth/cookies";
import { getDb } from "@/lib/db/client";
import { isDisabledSession } from "@/lib/db/queries/disabled-sessions";
import { authSecret } from "./secret";

/** A session token as `disabled_session` keeps it: a used-up credential is not kept as it was. */
export function sessionTokenHash(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/**
 * Whether the request carries the session cookie of a session a disable ended, its account still
 * disabled and the session not past its own expiry. Only a cookie this server signed is looked
 * up: a made-up one costs no query.
 */
export async function endedByDisable(headers: Headers): Promise<boolean> {
  const token = signedToken(getSessionCookie(headers));
  if (!token) return false;
  return isDisabledSession(await getDb(), sessionTokenHash(token));
}

/**
 * The token of a session cookie, when its signature is this server's: better-auth writes
 * `<token>.<signature>`, the signature the base64 HMAC-SHA256 of the token under the auth secret.
 */
function signedToken(cookie: string | null): string | null {
  const dot = cookie?.lastIndexOf(".") ?? -1;
  if (!cookie || dot < 1) return null;
  const token = cookie.slice(0, dot);
  const given = Buffer.from(cookie.slice(dot + 1), "base64");
  const expected = createHmac("sha256", authSecret()).update(token, "utf8").digest();
  return given.length === expected.length && timingSafeEqual(given, expected) ? token : null;
}
