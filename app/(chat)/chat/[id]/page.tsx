import { notFound } from "next/navigation";
import { ChatView } from "@/components/chat/chat-view";
import { ExportMenu } from "@/components/chat/export-menu";
import { requirePageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { findChatForUser, isReplying } from "@/lib/db/queries/chats";
import { loadHistory } from "@/lib/db/queries/messages";
import { rowToUIMessage } from "@/lib/message/ui-message";

export const dynamic = "force-dynamic";

export default async function ChatPage({ params }: { params: Promise<{ id: string }> }) {
  const user = await requirePageUser();
  const db = await getDb();
  const chat = await findChatForUser(db, user.id, (await params).id);
  if (!chat) notFound();
  const messages = (await loadHistory(db, chat.id)).map(rowToUIMessage);
  return (
    <>
      <header className="flex h-14 shrink-0 items-center gap-2 border-b border-line px-6">
        <h1 className="min-w-0 flex-1 truncate text-base font-semibold">{chat.title}</h1>
        <ExportMenu chatId={chat.id} />
      </header>
      <ChatView
        key={chat.id}
        chatId={chat.id}
        initialMessages={messages}
        initialModelId={chat.modelId}
        initialReplying={isReplying(chat)}
      />
    </>
  );
}
