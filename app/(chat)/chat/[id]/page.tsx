import { notFound } from "next/navigation";
import { Composer } from "@/components/chat/composer";
import { requirePageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { findChatForUser } from "@/lib/db/queries/chats";

export const dynamic = "force-dynamic";

export default async function ChatPage({ params }: { params: Promise<{ id: string }> }) {
  const user = await requirePageUser();
  const chat = await findChatForUser(await getDb(), user.id, (await params).id);
  if (!chat) notFound();
  return (
    <>
      <header className="flex h-14 shrink-0 items-center border-b border-line px-6">
        <h1 className="truncate text-base font-semibold">{chat.title}</h1>
      </header>
      <section className="flex flex-1 flex-col items-center justify-center px-6 text-center">
        <p className="text-sm text-muted">No messages yet.</p>
      </section>
      <Composer disabledReason="Sending messages arrives with the next release." />
    </>
  );
}
