import { forbidden } from "next/navigation";
import type { SessionUser } from "@/lib/auth/guards";
import { requirePageUser } from "@/lib/auth/session";

/**
 * For admin pages: signed out → the sign-in page; signed in but not an admin → 403, an in-app
 * page that says so and leads back to the chats (the API answers 403 too, DESIGN §15).
 */
export async function requirePageAdmin(): Promise<SessionUser> {
  const user = await requirePageUser();
  if (user.role !== "admin") forbidden();
  return user;
}
