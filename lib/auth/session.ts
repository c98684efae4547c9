import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { getSessionUser, type SessionUser } from "./guards";

/** For server components: the signed-in user, or a redirect to the sign-in page. */
export async function requirePageUser(): Promise<SessionUser> {
  const user = await getSessionUser(await headers());
  if (!user) redirect("/login");
  return user;
}

export async function currentPageUser(): Promise<SessionUser | null> {
  return getSessionUser(await headers());
}
