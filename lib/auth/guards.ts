import { getDb } from "@/lib/db/client";
import { findChatForUser } from "@/lib/db/queries/chats";
import { type Chat, USER_STATUSES, type UserStatus } from "@/lib/db/schema";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { LruMap } from "@/lib/lru-map";
import { accountDisabled, statusError } from "./account-status";
import { SESSION_COOKIE_CACHE_SECONDS, sessionStanding } from "./cookie-cache";
import { endedByDisable } from "./disabled-session";
import { getAuth } from "./server";

export type SessionUser = {
  id: string;
  email: string;
  name: string;
  role: "admin" | "user";
  status: UserStatus;
};

/** Cookie headers better-auth verified lately, and whose session they carry. */
type VerifiedCookies = { user: SessionUser; token: string; until: number };
const VERIFIED_MAX_ENTRIES = 1_024;
const verifiedCookies = new LruMap<string, VerifiedCookies>(VERIFIED_MAX_ENTRIES);

/**
 * The signed-in user for these request headers, whatever their status, or null.
 *
 * better-auth verifies the signed cookies and decodes its cookie cache on every call, which
 * costs a turn more than the rest of its admission. The same cookie header within the cookie
 * cache's lifetime carries the same session, so its verified result is kept; what must stay
 * current — the session row still there and unexpired, the role and status unchanged — is
 * the one query better-auth's cookie cache runs too, and it runs on every request.
 */
export async function getSessionUser(headers: Headers): Promise<SessionUser | null> {
  const known = recentlyVerified(headers);
  if (known) {
    if (await stillStanding(known)) return known.user;
    verifiedCookies.delete(known.cookies);
  }
  return verifiedSessionUser(headers);
}

/** These cookies' verified session, while the cookie cache's lifetime lets it stand in. */
function recentlyVerified(headers: Headers): (VerifiedCookies & { cookies: string }) | null {
  const cookies = headers.get("cookie");
  const known = cookies ? verifiedCookies.get(cookies) : undefined;
  if (!cookies || !known) return null;
  if (Date.now() < known.until) return { ...known, cookies };
  verifiedCookies.delete(cookies);
  return null;
}

/** Whether a verified session's row is still there, unexpired, with the same role and status. */
async function stillStanding(known: VerifiedCookies): Promise<boolean> {
  const standing = await sessionStanding(await getDb(), known.token, known.user.id);
  return standing?.role === known.user.role && standing.status === known.user.status;
}

/** better-auth's own verification of the cookies (kept for the next request), or null. */
async function verifiedSessionUser(headers: Headers): Promise<SessionUser | null> {
  const cookies = headers.get("cookie");
  const auth = await getAuth();
  const session = await auth.api.getSession({ headers });
  if (!session) return null;
  const { id, email, name, role, status } = session.user;
  // A cached session's role and status were just checked against the row (lib/auth/cookie-cache.ts).
  const user: SessionUser = {
    id,
    email,
    name,
    role: role === "admin" ? "admin" : "user",
    // An unknown status is refused like a disabled account, never let through.
    status: USER_STATUSES.find((s) => s === status) ?? "disabled",
  };
  if (cookies && user.role === role && user.status === status) {
    const until = Math.min(
      Date.now() + SESSION_COOKIE_CACHE_SECONDS * 1_000,
      new Date(session.session.expiresAt).getTime(),
    );
    verifiedCookies.set(cookies, { user, token: session.session.token, until });
  }
  return user;
}

/**
 * The signed-in, active user: 401 when signed out, 403 while pending or when disabled (a session
 * that disabling the account ended included: its browser is told so, not just to sign in).
 */
export async function requireUser(request: Request): Promise<SessionUser> {
  const user = await getSessionUser(request.headers);
  if (!user) {
    throw (await endedByDisable(request.headers))
      ? accountDisabled()
      : new AppError("unauthorized:auth");
  }
  const refused = statusError(user.status);
  if (refused) throw refused;
  return user;
}

/**
 * `work` for the signed-in, active user, answered as `requireUser` answers. For cookies verified
 * lately, `work` runs beside the check that their session still stands rather than after it
 * (one round trip less before a turn's first token); if it no longer does, what `work` did is
 * undone with `undo` and the request is answered as requireUser answers it now (401, 403, or
 * `work` again for the user as they are now).
 */
export async function requireUserFor<T>(
  request: Request,
  work: (user: SessionUser) => Promise<T>,
  undo: (done: T) => Promise<void>,
): Promise<{ user: SessionUser; done: T }> {
  const known = recentlyVerified(request.headers);
  if (known && known.user.status === "active") {
    const [standing, done] = await Promise.allSettled([stillStanding(known), work(known.user)]);
    if (standing.status === "fulfilled" && standing.value) {
      if (done.status === "rejected") throw done.reason;
      return { user: known.user, done: done.value };
    }
    if (done.status === "fulfilled") {
      // The session's answer comes first: a failed undo is logged (what it held expires).
      await undo(done.value).catch((error: unknown) =>
        log.warn({ err: error }, "undoing work for a session that no longer stands failed"),
      );
    }
    if (standing.status === "rejected") throw standing.reason;
    verifiedCookies.delete(known.cookies);
  }
  const user = await requireUser(request);
  return { user, done: await work(user) };
}

export async function requireAdmin(request: Request): Promise<SessionUser> {
  const user = await requireUser(request);
  if (user.role !== "admin") throw new AppError("forbidden:admin", "Only admins can do this.");
  return user;
}

/** Another user's chat is answered exactly like a missing one. */
export const chatNotFound = () => new AppError("not_found:chat", "Chat not found.");

/** The user's chat, or 404. */
export async function requireChat(user: SessionUser, chatId: string): Promise<Chat> {
  const chat = await findChatForUser(await getDb(), user.id, chatId);
  if (!chat) throw chatNotFound();
  return chat;
}
