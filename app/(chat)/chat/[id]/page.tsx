import { notFound } from "next/navigation";
import { ChatView } from "@/components/chat/chat-view";
import { ExportMenu } from "@/components/chat/export-menu";
import { requirePageUser } from "@/lib/auth/session";
import { PAGE_DEFAULT_LIMIT } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { findChatForUser, isReplying } from "@/lib/db/queries/chats";
import { loadMessagePage } from "@/lib/db/queries/messages";
import { rowToUIMessage } from "@/lib/message/ui-message";

export const dynamic = "force-dynamic";

export default async function ChatPage({ params }: { params: Promise<{ id: string }> }) {
  const user = await requirePageUser();
  const db = await getDb();
  const chat = await findChatForUser(db, user.id, (await params).id);
  if (!chat) notFound();
  // The newest page only: older messages load as the user scrolls up.
  const page = await loadMessagePage(db, chat.id, { limit: PAGE_DEFAULT_LIMIT });
  const messages = (page?.messages ?? []).map(rowToUIMessage);
  return (
    <>
      <header className="flex h-14 shrink-0 items-center gap-2 border-b border-line pr-4 pl-14 md:px-6">
        <h1 dir="auto" className="min-w-0 flex-1 truncate text-base font-semibold">
          {chat.title}
        </h1>
        <ExportMenu chatId={chat.id} />
      </header>
      <ChatView
        key={chat.id}
        chatId={chat.id}
        initialMessages={messages}
        initialHasMore={page?.hasMore ?? false}
        initialModelId={chat.modelId}
        initialReplying={isReplying(chat)}
        untitled={!chat.titled}
      />
    </>
  );
}
