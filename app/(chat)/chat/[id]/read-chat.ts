import { cache } from "react";
import { requirePageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { findChatForUser } from "@/lib/db/queries/chats";

/**
 * The signed-in user's chat, read once per request: the layout (its header, and a 404 decided
 * before anything streams) and the page (its messages, behind the loading state) both need it.
 */
export const readChat = cache(async (id: string) => {
  const user = await requirePageUser();
  return findChatForUser(await getDb(), user.id, id);
});
