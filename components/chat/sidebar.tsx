"use client";

import { LogOut, Menu, MessageSquarePlus, SlidersHorizontal, Users, X } from "lucide-react";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { Dialog } from "radix-ui";
import { type ReactNode, useEffect, useRef, useState } from "react";
import { authClient } from "@/lib/auth/client";
import { LinkPending } from "../ui/link-pending";
import { buttonGhost, buttonPrimary } from "../ui/styles";
import { ThemeToggle } from "../ui/theme";
import { ChatListEntry } from "./chat-list-entry";
import { focusComposer } from "./skip-link";
import { type ChatListItem, useChats } from "./use-chats";

type Props = {
  user: { name: string; email: string; role: "admin" | "user" };
  initialChats: ChatListItem[];
  /** Older chats exist beyond the first page. */
  initialHasMore: boolean;
};

/** Tailwind's `md` breakpoint: from here on the chat list is a column, not a drawer. */
const WIDE_SCREEN = "(min-width: 768px)";

/**
 * The chat list: a column beside the chat from 768 px up, a drawer below that, opened by the
 * menu button in the corner (Radix Dialog: Escape and a click outside close it, focus moves in
 * and comes back to the button).
 */

export function Sidebar(props: Props) {
  const pathname = usePathname();
  const [open, setOpen] = useState(false);
  // Following a link in the drawer closes it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: close whenever the page changes
  useEffect(() => setOpen(false), [pathname]);
  // A screen that grows past the drawer's width (a rotation, a wider window) shows the column:
  // a drawer still open but hidden there would keep the page inert behind it.
  useEffect(() => {
    const wide = window.matchMedia(WIDE_SCREEN);
    const closeIfWide = () => {
      if (wide.matches) setOpen(false);
    };
    wide.addEventListener("change", closeIfWide);
    return () => wide.removeEventListener("change", closeIfWide);
  }, []);
  // New chat on the chat already open, from the drawer: the page does not change, so the drawer
  // closes here, and the message box takes the focus once it has (Radix keeps it inside before).
  const isOpen = useRef(open);
  isOpen.current = open;
  const composerOnClose = useRef(false);
  const onAlreadyOpen = () => {
    if (!isOpen.current) {
      focusComposer();
      return;
    }
    composerOnClose.current = true;
    setOpen(false);
  };
  // One list for both places, so the drawer opens on what the column shows.
  const openId = pathname.startsWith("/chat/") ? pathname.slice("/chat/".length) : null;
  const list = useChats(props.initialChats, props.initialHasMore, openId, onAlreadyOpen);
  const panel = <SidebarPanel user={props.user} list={list} />;
  return (
    <>
      <aside className="hidden h-full w-72 shrink-0 flex-col border-r border-line bg-panel md:flex">
        {panel}
      </aside>
      <Dialog.Root open={open} onOpenChange={setOpen}>
        <Dialog.Trigger
          aria-label="Open the chat list"
          className="fixed top-[calc(var(--outage-offset,0px)+0.625rem)] left-2 z-30 rounded-lg p-2 text-zinc-700 hover:bg-zinc-100 md:hidden"
        >
          <Menu size={20} />
        </Dialog.Trigger>
        <Dialog.Portal>
          <Dialog.Overlay className="fixed inset-0 z-40 bg-black/30 md:hidden" />
          <Dialog.Content
            className="fixed inset-y-0 left-0 z-50 flex w-72 max-w-[85vw] flex-col border-r border-line bg-panel shadow-xl md:hidden"
            onCloseAutoFocus={(event) => {
              if (!composerOnClose.current) return;
              composerOnClose.current = false;
              event.preventDefault();
              focusComposer();
            }}
            // The chat already open, picked again: the page does not change, so the drawer
            // closes here (another chat's link closes it once that chat is read).
            onClick={(event) => {
              const link = (event.target as HTMLElement | null)?.closest("a[href]");
              if (link?.getAttribute("href") === pathname) setOpen(false);
            }}
            // Escape in a chat's title box cancels the rename, not the whole drawer.
            onEscapeKeyDown={(event) => {
              if ((event.target as HTMLElement | null)?.closest("input")) event.preventDefault();
            }}
          >
            <Dialog.Title className="sr-only">Chats</Dialog.Title>
            <Dialog.Description className="sr-only">
              Your chats, a new chat, and your account.
            </Dialog.Description>
            <Dialog.Close
              aria-label="Close the chat list"
              className="absolute top-3.5 right-3 rounded-lg p-1.5 text-zinc-600 hover:bg-zinc-100"
            >
              <X size={18} />
            </Dialog.Close>
            {panel}
          </Dialog.Content>
        </Dialog.Portal>
      </Dialog.Root>
    </>
  );
}

function SidebarPanel({
  user,
  list,
}: {
  user: Props["user"];
  list: ReturnType<typeof useChats>;
}): ReactNode {
  const pathname = usePathname();
  const router = useRouter();
  const { chats, beyondLoaded, error, creating, create, rename, remove, dismissError } = list;
  const { hasMore, loadMore, loadingOlder } = list;
  const nav = useRef<HTMLElement>(null);
  const newChat = useRef<HTMLButtonElement>(null);

  /**
   * Deletes a chat, then hands focus on from its entry (where the confirmation returned it) to
   * the next entry, else the one before, else "New chat": left alone it would fall to the page.
   */
  async function deleteChat(id: string) {
    const index = chats.findIndex((c) => c.id === id);
    // The open chat listed after the loaded ones (index -1) hands on to the last of them.
    const heir = index === -1 ? chats.at(-1) : (chats[index + 1] ?? chats[index - 1]);
    const entry = nav.current?.querySelector(`[data-chat-id="${id}"]`);
    if (!(await remove(id))) return;
    const focused = document.activeElement;
    if (focused && focused !== document.body && !entry?.contains(focused)) return;
    const link = heir && nav.current?.querySelector<HTMLElement>(`a[href="/chat/${heir.id}"]`);
    (link ?? newChat.current)?.focus();
  }

  /**
   * Where the page of older chats being loaded starts in the list. The button goes with the last
   * page: focus, which it held, moves on to the first chat that page brought instead of falling
   * to the page.
   */
  const olderFrom = useRef<number | null>(null);
  function showOlder() {
    olderFrom.current = chats.length;
    void loadMore();
  }
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once the page is in the list
  useEffect(() => {
    const from = olderFrom.current;
    if (from === null || loadingOlder) return;
    olderFrom.current = null;
    if (hasMore || document.activeElement !== document.body) return;
    nav.current?.querySelectorAll<HTMLElement>('a[href^="/chat/"]')[from]?.focus();
  }, [chats, hasMore, loadingOlder]);

  async function signOut() {
    await authClient.signOut();
    router.replace("/login");
    router.refresh();
  }

  return (
    <>
      <div className="flex items-center justify-between px-4 pt-4 pb-3">
        <span className="text-lg font-semibold tracking-tight">Fold</span>
      </div>
      <div className="px-3">
        <button
          ref={newChat}
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
      {/* A scrolling box clips what is drawn past its edges: padding on every side leaves room
          for the focus ring of the chats at its top and bottom (it is drawn outside the link). */}
      <nav ref={nav} aria-label="Chats" className="mt-2 min-h-0 flex-1 overflow-y-auto px-3 py-1">
        {chats.length === 0 && !beyondLoaded ? (
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
                  onDelete={() => deleteChat(chat.id)}
                />
              );
            })}
            {beyondLoaded ? (
              <>
                {/* Older chats than those above lie between: "Show older chats" lists them. */}
                <li aria-hidden="true" className="px-3 py-1 text-center text-xs text-muted">
                  ⋯
                </li>
                <ChatListEntry
                  key={beyondLoaded.id}
                  chat={beyondLoaded}
                  active
                  onRename={(title) => rename(beyondLoaded.id, title)}
                  onDelete={() => deleteChat(beyondLoaded.id)}
                />
              </>
            ) : null}
          </ul>
        )}
        {hasMore ? (
          // aria-disabled, not disabled: a disabled button drops the keyboard's focus to the page.
          <button
            type="button"
            onClick={showOlder}
            aria-disabled={loadingOlder}
            aria-busy={loadingOlder}
            className={`${buttonGhost} my-2 w-full text-xs text-muted aria-disabled:cursor-wait`}
          >
            {loadingOlder ? "Loading…" : "Show older chats"}
          </button>
        ) : null}
      </nav>
      {user.role === "admin" ? (
        <div className="border-t border-line px-3 py-2">
          {/* Not prefetched: every chat opened would render both admin pages on the server. */}
          <Link
            href="/admin/models"
            prefetch={false}
            className={`${buttonGhost} w-full justify-start text-zinc-600`}
          >
            <SlidersHorizontal size={16} />
            <span className="flex-1">Admin · Models</span>
            <LinkPending label="Opening…" />
          </Link>
          <Link
            href="/admin/users"
            prefetch={false}
            className={`${buttonGhost} w-full justify-start text-zinc-600`}
          >
            <Users size={16} />
            <span className="flex-1">Admin · Users</span>
            <LinkPending label="Opening…" />
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
        <div className="flex items-center">
          <ThemeToggle className={buttonGhost} />
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
      </div>
    </>
  );
}
