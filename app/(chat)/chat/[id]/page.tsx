import { notFound } from "next/navigation";
import { ChatView } from "@/components/chat/chat-view";
import { PAGE_DEFAULT_LIMIT } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { isReplying } from "@/lib/db/queries/chats";
import { loadMessagePage } from "@/lib/db/queries/messages";
import { rowToUIMessage } from "@/lib/message/ui-message";
import { readChat } from "./read-chat";

export const dynamic = "force-dynamic";

export default async function ChatPage({ params }: { params: Promise<{ id: string }> }) {
  const chat = await readChat((await params).id);
  if (!chat) notFound();
  // The newest page only: older messages load as the user scrolls up.
  const page = await loadMessagePage(await getDb(), chat.id, { limit: PAGE_DEFAULT_LIMIT });
  const messages = (page?.messages ?? []).map(rowToUIMessage);
  return (
    <ChatView
      key={chat.id}
      chatId={chat.id}
      initialMessages={messages}
      initialHasMore={page?.hasMore ?? false}
      initialModelId={chat.modelId}
      initialReplying={isReplying(chat)}
    />
  );
}
