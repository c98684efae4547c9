import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { endedByDisable } from "./disabled-session";
import { getSessionUser, type SessionUser } from "./guards";
import {
  DISABLED_REASON,
  disabledSignInHref,
  PAGE_PATH_HEADER,
  returnPath,
  signInHref,
} from "./return-path";

/** Where a signed-in account that may not chat (pending or disabled) is sent. */
export const WAITING_PATH = "/waiting";

/**
 * For server components: the signed-in, active user; signed out → the sign-in page (which
 * returns to the page asked for), pending or disabled → the waiting page.
 */
export async function requirePageUser(): Promise<SessionUser> {
  const requestHeaders = await headers();
  const user = await getSessionUser(requestHeaders);
  if (!user) redirect(await signInPage(requestHeaders));
  if (user.status !== "active") redirect(WAITING_PATH);
  return user;
}

/**
 * Where a page sends a visitor without a session: the sign-in page, which returns to the page
 * asked for, and says why when the visitor's session ended because an admin disabled the account.
 */
export async function signInPage(requestHeaders: Headers): Promise<string> {
  const path = returnPath(requestHeaders.get(PAGE_PATH_HEADER));
  return (await endedByDisable(requestHeaders)) ? disabledSignInHref(path) : signInHref(path);
}

/**
 * Whether the sign-in page was sent `signInPage`'s reason and the visitor's own session cookie
 * bears it out: a link with the reason written into it makes nobody else read that their
 * account was disabled.
 */
export async function signedOutByDisable(searchParams: PageSearchParams): Promise<boolean> {
  if ((await searchParams).reason !== DISABLED_REASON) return false;
  return endedByDisable(await headers());
}

export async function currentPageUser(): Promise<SessionUser | null> {
  return getSessionUser(await headers());
}

/** A page's query, as Next hands it to the page. */
export type PageSearchParams = Promise<Record<string, string | string[] | undefined>>;

/**
 * For the sign-in and sign-up pages: the page a signed-out visitor asked for (`?next=`, only
 * one of this server), where the form goes once they are in; one signed in already goes there
 * (or home) now.
 */
export async function pageAfterSignIn(searchParams: PageSearchParams): Promise<string | null> {
  const next = returnPath((await searchParams).next);
  if (await currentPageUser()) redirect(next ?? "/");
  return next;
}
