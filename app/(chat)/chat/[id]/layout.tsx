import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { ExportMenu } from "@/components/chat/export-menu";
import { readChat } from "./read-chat";

/**
 * A chat's header. Read here, above the loading state, so a chat that is not the user's is a
 * real 404 (a page behind a loading state has already answered 200 when it finds out).
 */
export default async function ChatLayout({
  children,
  params,
}: {
  children: ReactNode;
  params: Promise<{ id: string }>;
}) {
  const chat = await readChat((await params).id);
  if (!chat) notFound();
  return (
    <>
      <header className="flex h-14 shrink-0 items-center gap-2 border-b border-line pr-4 pl-14 md:px-6">
        <h1 className="min-w-0 flex-1 truncate text-base font-semibold">{chat.title}</h1>
        <ExportMenu chatId={chat.id} />
      </header>
      {children}
    </>
  );
}
