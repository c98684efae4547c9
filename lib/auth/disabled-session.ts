/**
 * A session that ended because an admin disabled its account. Disabling deletes the account's
 * sessions at once (a later Enable must not bring them back), but each browser still holds its
 * session cookie: when it comes back, Fold finds the token's hash among those a disable ended
 * (`disabled_session`) and says why it was signed out, where it would otherwise just ask it to
 * sign in. Only that browser has the token, so no one else learns that the account was disabled.
 */
import { createHash } from "node:crypto";
import { getSessionCookie } from "better-auth/cookies";
import { getDb } from "@/lib/db/client";
import { isDisabledSession } from "@/lib/db/queries/disabled-sessions";

/** The sign-in page's `?reason=` for a browser whose account was disabled while signed in. */
export const DISABLED_REASON = "disabled";

/** A session token as `disabled_session` keeps it: a used-up credential is not kept as it was. */
export function sessionTokenHash(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/**
 * Whether the request carries the session cookie of a session a disable ended, its account still
 * disabled. The cookie's signature goes unchecked: the token is the secret, and a match tells
 * its holder only what became of their own account.
 */
export async function endedByDisable(headers: Headers): Promise<boolean> {
  // better-auth's cookie holds `<token>.<signature>`.
  const cookie = getSessionCookie(headers);
  const dot = cookie?.lastIndexOf(".") ?? -1;
  if (!cookie || dot < 1) return false;
  return isDisabledSession(await getDb(), sessionTokenHash(cookie.slice(0, dot)));
}
