import { getDb } from "@/lib/db/client";
import { findChatForUser } from "@/lib/db/queries/chats";
import { type Chat, USER_STATUSES, type UserStatus } from "@/lib/db/schema";
import { AppError } from "@/lib/errors";
import { getAuth } from "./server";

export type SessionUser = {
  id: string;
  email: string;
  name: string;
  role: "admin" | "user";
  status: UserStatus;
};

/** The signed-in user for these request headers, whatever their status, or null. */
export async function getSessionUser(headers: Headers): Promise<SessionUser | null> {
  const auth = await getAuth();
  const session = await auth.api.getSession({ headers });
  if (!session) return null;
  const { id, email, name, role, status } = session.user;
  // A cached session's role and status were just checked against the row (lib/auth/cookie-cache.ts).
  return {
    id,
    email,
    name,
    role: role === "admin" ? "admin" : "user",
    // An unknown status is refused like a disabled account, never let through.
    status: USER_STATUSES.find((s) => s === status) ?? "disabled",
  };
}

/** Why a signed-in account may not use Fold yet (or any more): every app route answers 403. */
export function statusError(status: UserStatus): AppError | null {
  if (status === "pending") {
    return new AppError(
      "forbidden:pending_approval",
      "Your account is waiting for an admin's approval.",
    );
  }
  if (status === "disabled") {
    return new AppError("forbidden:account_disabled", "This account is disabled.");
  }
  return null;
}

/** The signed-in, active user: 401 when signed out, 403 while pending or when disabled. */
export async function requireUser(request: Request): Promise<SessionUser> {
  const user = await getSessionUser(request.headers);
  if (!user) throw new AppError("unauthorized:auth");
  const refused = statusError(user.status);
  if (refused) throw refused;
  return user;
}

export async function requireAdmin(request: Request): Promise<SessionUser> {
  const user = await requireUser(request);
  if (user.role !== "admin") throw new AppError("forbidden:admin", "Only admins can do this.");
  return user;
}

/** The user's chat; another user's chat is answered exactly like a missing one. */
export async function requireChat(user: SessionUser, chatId: string): Promise<Chat> {
  const chat = await findChatForUser(await getDb(), user.id, chatId);
  if (!chat) throw new AppError("not_found:chat", "Chat not found.");
  return chat;
}
