import type { ReactNode } from "react";
import { Sidebar } from "@/components/chat/sidebar";
import { SkipToComposer } from "@/components/chat/skip-link";
import { requirePageUser } from "@/lib/auth/session";
import { PAGE_DEFAULT_LIMIT } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { listChatPage } from "@/lib/db/queries/chats";

export const dynamic = "force-dynamic";

export default async function ChatLayout({ children }: { children: ReactNode }) {
  const user = await requirePageUser();
  const page = await listChatPage(await getDb(), user.id, { limit: PAGE_DEFAULT_LIMIT });
  const initialChats = (page?.chats ?? []).map(({ id, title, updatedAt, createdAt }) => ({
    id,
    title,
    updatedAt,
    createdAt,
  }));
  return (
    <div className="flex h-full">
      {/* A title Next's metadata would drop for a moment on every move to another chat. */}
      <title>Fold</title>
      <SkipToComposer />
      <Sidebar user={user} initialChats={initialChats} initialHasMore={page?.hasMore ?? false} />
      <main className="flex min-w-0 flex-1 flex-col">{children}</main>
    </div>
  );
}
