import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { getSessionUser, type SessionUser } from "./guards";

/** Where a signed-in account that may not chat (pending or disabled) is sent. */
export const WAITING_PATH = "/waiting";

/**
 * For server components: the signed-in, active user; signed out → the sign-in page, pending
 * or disabled → the waiting page.
 */
export async function requirePageUser(): Promise<SessionUser> {
  const user = await getSessionUser(await headers());
  if (!user) redirect("/login");
  if (user.status !== "active") redirect(WAITING_PATH);
  return user;
}

export async function currentPageUser(): Promise<SessionUser | null> {
  return getSessionUser(await headers());
}
