import { notFound } from "next/navigation";
import type { SessionUser } from "@/lib/auth/guards";
import { requirePageUser } from "@/lib/auth/session";

/**
 * For admin pages: signed out → the sign-in page; signed in but not an admin → 404, so the
 * page does not even admit it exists (the API answers 403, DESIGN §15).
 */
export async function requirePageAdmin(): Promise<SessionUser> {
  const user = await requirePageUser();
  if (user.role !== "admin") notFound();
  return user;
}
