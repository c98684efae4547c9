"use client";

import { LogOut, MessageSquarePlus, SlidersHorizontal, Users } from "lucide-react";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { authClient } from "@/lib/auth/client";
import { buttonGhost, buttonPrimary } from "../ui/styles";
import { ChatListEntry } from "./chat-list-entry";
import { type ChatListItem, useChats } from "./use-chats";

type Props = {
  user: { name: string; email: string; role: "admin" | "user" };
  initialChats: ChatListItem[];
};

export function Sidebar({ user, initialChats }: Props) {
  const pathname = usePathname();
  const router = useRouter();
  const { chats, error, creating, create, rename, remove, dismissError } = useChats(initialChats);

  async function signOut() {
    await authClient.signOut();
    router.replace("/login");
    router.refresh();
  }

  return (
    <aside className="flex h-full w-72 shrink-0 flex-col border-r border-line bg-panel">
      <div className="flex items-center justify-between px-4 pt-4 pb-3">
        <span className="text-lg font-semibold tracking-tight">Fold</span>
      </div>
      <div className="px-3">
        <button
          type="button"
          onClick={create}
          disabled={creating}
          className={`${buttonPrimary} w-full`}
        >
          <MessageSquarePlus size={16} />
          {creating ? "Creating…" : "New chat"}
        </button>
      </div>
      {error ? (
        <div
          role="alert"
          className="mx-3 mt-3 flex items-start justify-between gap-2 rounded-lg bg-red-50 px-3 py-2 text-xs text-red-700"
        >
          <span>{error}</span>
          <button type="button" onClick={dismissError} className="font-medium">
            Dismiss
          </button>
        </div>
      ) : null}
      <nav aria-label="Chats" className="mt-3 min-h-0 flex-1 overflow-y-auto px-3">
        {chats.length === 0 ? (
          <p className="px-3 py-6 text-center text-sm text-muted">No chats yet. Start one above.</p>
        ) : (
          <ul className="space-y-0.5">
            {chats.map((chat) => {
              const active = pathname === `/chat/${chat.id}`;
              return (
                <ChatListEntry
                  key={chat.id}
                  chat={chat}
                  active={active}
                  onRename={(title) => rename(chat.id, title)}
                  onDelete={() => remove(chat.id, active)}
                />
              );
            })}
          </ul>
        )}
      </nav>
      {user.role === "admin" ? (
        <div className="border-t border-line px-3 py-2">
          <Link
            href="/admin/models"
            className={`${buttonGhost} w-full justify-start text-zinc-600`}
          >
            <SlidersHorizontal size={16} />
            Admin · Models
          </Link>
          <Link href="/admin/users" className={`${buttonGhost} w-full justify-start text-zinc-600`}>
            <Users size={16} />
            Admin · Users
          </Link>
        </div>
      ) : null}
      <div className="flex items-center justify-between gap-2 border-t border-line px-4 py-3">
        <div className="min-w-0 text-sm">
          <p className="truncate font-medium">{user.name}</p>
          <p className="truncate text-xs text-muted">
            {user.email}
            {user.role === "admin" ? " · admin" : ""}
          </p>
        </div>
        <button
          type="button"
          onClick={signOut}
          className={buttonGhost}
          aria-label="Sign out"
          title="Sign out"
        >
          <LogOut size={16} />
        </button>
      </div>
    </aside>
  );
}
