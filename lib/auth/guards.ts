import { eq } from "drizzle-orm";
import { getDb } from "@/lib/db/client";
import { findChatForUser } from "@/lib/db/queries/chats";
import { type Chat, user as userTable } from "@/lib/db/schema";
import { AppError } from "@/lib/errors";
import { getAuth, isAdminEmail } from "./server";

export type SessionUser = {
  id: string;
  email: string;
  name: string;
  role: "admin" | "user";
};

/** The signed-in user for these request headers, or null. */
export async function getSessionUser(headers: Headers): Promise<SessionUser | null> {
  const auth = await getAuth();
  const session = await auth.api.getSession({ headers });
  if (!session) return null;
  const { id, email, name } = session.user;
  // The role is read from the row, not the session cookie cache, so a change applies at once.
  const db = await getDb();
  const [row] = await db
    .select({ role: userTable.role })
    .from(userTable)
    .where(eq(userTable.id, id));
  if (!row) return null;
  const role = row.role === "admin" || isAdminEmail(email) ? "admin" : "user";
  return { id, email, name, role };
}

export async function requireUser(request: Request): Promise<SessionUser> {
  const user = await getSessionUser(request.headers);
  if (!user) throw new AppError("unauthorized:auth");
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
