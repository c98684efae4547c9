"use client";

import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState } from "react";
import type { ChatListing } from "@/lib/db/queries/chats";
import { apiFetch } from "../outage/api-fetch";
import { focusMessageBoxOnArrival } from "./arrival-focus";
import { focusComposer } from "./skip-link";

/** Its times are the list's cursor: the next page starts after the last chat's own values. */
export type ChatListItem = Pick<ChatListing, "id" | "title" | "updatedAt" | "createdAt">;

async function send(url: string, init: RequestInit): Promise<Response> {
  const response = await apiFetch(url, {
    ...init,
    headers: { "content-type": "application/json", ...init.headers },
  });
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as {
      error?: { message?: string };
    } | null;
    throw new Error(body?.error?.message ?? `Request failed (${response.status})`);
  }
  return response;
}

/** A chat's place in the list as text that sorts like it: the list's own order, newest last. */
const placeOf = (chat: ChatListItem) => `${chat.updatedAt}|${chat.createdAt}|${chat.id}`;

/**
 * The list with a refreshed first page in place of its first page: the older chats loaded
 * below it stay, those that are now on it (or above it: moved up meanwhile) are not repeated.
 * Places compare whole (updatedAt, createdAt, id), as the server orders them: two chats active
 * within the same instant are both kept.
 */
export function withRefreshedFirstPage(
  list: readonly ChatListItem[],
  first: readonly ChatListItem[],
): ChatListItem[] {
  const onFirst = new Set(first.map((c) => c.id));
  const last = first.at(-1);
  if (!last) return [...first];
  const oldest = placeOf(last);
  return [...first, ...list.filter((c) => !onFirst.has(c.id) && placeOf(c) < oldest)];
}

/** How long deleting the open chat waits for its page to be left before deleting anyway. */
const LEAVE_WAIT_MS = 3_000;

/**
 * The sidebar's chat list: the first page server-rendered, older pages on request, kept in step
 * with each mutation.
 */
export function useChats(
  initial: ChatListItem[],
  initialHasMore: boolean,
  /** The chat open on the page, if any. */
  openId: string | null,
  /** New chat answered with the chat already open: where the message box gets the focus. */
  onAlreadyOpen: () => void = focusComposer,
) {
  const router = useRouter();
  const alreadyOpen = useRef(onAlreadyOpen);
  alreadyOpen.current = onAlreadyOpen;
  const [chats, setChats] = useState(initial);
  const [hasMore, setHasMore] = useState(initialHasMore);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [loadingOlder, setLoadingOlder] = useState(false);
  // One page at a time: a second click while one loads would ask for the same page again.
  const loadingOlderNow = useRef(false);

  // Whether older pages were loaded: a refresh of the first page (after every reply) keeps them.
  const loadedOlder = useRef(false);

  // The chat open on the page when it is older than every chat loaded (a link, a reload): it is
  // shown after them, so it can be found, renamed and deleted in the list as any other.
  const [openOlder, setOpenOlder] = useState<ChatListItem | null>(null);
  // Not when every chat is loaded: one missing then is new (the refresh brings it) or gone.
  const openListed = openId === null || !hasMore || chats.some((c) => c.id === openId);
  useEffect(() => {
    if (openListed || openId === null) return;
    const controller = new AbortController();
    void apiFetch(`/api/chats/${openId}?limit=1`, { signal: controller.signal })
      .then(async (response) => {
        if (!response.ok) return;
        const { chat } = (await response.json()) as { chat: ChatListItem };
        const { id, title, updatedAt, createdAt } = chat;
        setOpenOlder({ id, title, updatedAt, createdAt });
      })
      // Not found (deleted meanwhile) or not reachable: the list shows what it has.
      .catch(() => undefined);
    return () => controller.abort();
  }, [openId, openListed]);
  const lastLoaded = chats.at(-1);
  const beyondLoaded =
    !openListed &&
    openOlder?.id === openId &&
    lastLoaded &&
    placeOf(openOlder) < placeOf(lastLoaded)
      ? openOlder
      : null;

  // A refreshed first page replaces the list's first page; older pages loaded stay below it
  // (and whether more remain stays what the last of them said).
  useEffect(() => {
    if (!loadedOlder.current) {
      setChats(initial);
      setHasMore(initialHasMore);
      return;
    }
    setChats((list) => withRefreshedFirstPage(list, initial));
  }, [initial, initialHasMore]);

  /** Runs an action, showing its failure; whether it succeeded. */
  const run = useCallback(async (action: () => Promise<void>): Promise<boolean> => {
    setError(null);
    try {
      await action();
      return true;
    } catch (e) {
      setError(e instanceof Error ? e.message : "Something went wrong.");
      return false;
    }
  }, []);

  const create = useCallback(
    () =>
      run(async () => {
        setCreating(true);
        try {
          // The newest chat when it was never used (200), rather than another empty one.
          const response = await send("/api/chats", {
            method: "POST",
            body: JSON.stringify({ reuseUnused: true }),
          });
          const { chat } = (await response.json()) as { chat: ChatListItem };
          setChats((list) => [chat, ...list.filter((c) => c.id !== chat.id)]);
          if (window.location.pathname === `/chat/${chat.id}`) {
            // Already there: the new chat is this one, ready for a message.
            alreadyOpen.current();
            return;
          }
          focusMessageBoxOnArrival();
          router.push(`/chat/${chat.id}`);
          router.refresh();
        } finally {
          setCreating(false);
        }
      }),
    [router, run],
  );

  const rename = useCallback(
    (id: string, title: string) =>
      run(async () => {
        await send(`/api/chats/${id}`, { method: "PATCH", body: JSON.stringify({ title }) });
        setChats((list) => list.map((c) => (c.id === id ? { ...c, title: title.trim() } : c)));
        setOpenOlder((chat) => (chat?.id === id ? { ...chat, title: title.trim() } : chat));
        router.refresh();
      }),
    [router, run],
  );

  // The chat whose page is being left before it is deleted, and what to call once it is.
  const openNow = useRef(openId);
  openNow.current = openId;
  const leaving = useRef<{ id: string; left: () => void } | null>(null);
  useEffect(() => {
    const pending = leaving.current;
    if (!pending || openId === pending.id) return;
    leaving.current = null;
    pending.left();
  }, [openId]);
  // The list unmounting (another page outside the chats, a sign-out) ends the wait too: the
  // delete the user confirmed still goes.
  useEffect(() => () => leaving.current?.left(), []);

  /** Waits, a few seconds at most, for the open chat's page to be left. */
  const leave = useCallback(
    (id: string) =>
      new Promise<void>((resolve) => {
        const left = () => {
          clearTimeout(timer);
          if (leaving.current?.left === left) leaving.current = null;
          resolve();
        };
        // A navigation that never lands here (the user went back to the chat meanwhile)
        // does not keep the delete waiting.
        const timer = setTimeout(left, LEAVE_WAIT_MS);
        leaving.current = { id, left };
        router.push("/");
      }),
    [router],
  );

  // Deletes under way, by chat: confirming one again waits for the same delete.
  const deleting = useRef(new Map<string, Promise<boolean>>());
  const remove = useCallback(
    (id: string) => {
      const underWay = deleting.current.get(id);
      if (underWay) return underWay;
      const deleted = run(async () => {
        // The open chat's page goes home before the chat goes: a page still open on a deleted
        // chat asks for it again (the reply the delete stops refreshes its ring and memory)
        // and is answered 404.
        if (openNow.current === id) await leave(id);
        await send(`/api/chats/${id}`, { method: "DELETE" });
        setChats((list) => list.filter((c) => c.id !== id));
        setOpenOlder((chat) => (chat?.id === id ? null : chat));
        router.refresh();
      }).finally(() => deleting.current.delete(id));
      deleting.current.set(id, deleted);
      return deleted;
    },
    [leave, router, run],
  );

  const loadMore = useCallback(async () => {
    if (loadingOlderNow.current) return;
    loadingOlderNow.current = true;
    setLoadingOlder(true);
    try {
      await run(async () => {
        // The last chat's values as listed, not its id alone: that chat may have been deleted
        // or moved up by a reply in another tab since, and the page must still start below it.
        const last = chats.at(-1);
        const query = last
          ? `?${new URLSearchParams({ before: last.id, updatedAt: last.updatedAt, createdAt: last.createdAt })}`
          : "";
        const response = await send(`/api/chats${query}`, { method: "GET" });
        const page = (await response.json()) as { chats: ChatListItem[]; hasMore: boolean };
        setChats((list) => {
          const known = new Set(list.map((c) => c.id));
          return [...list, ...page.chats.filter((c) => !known.has(c.id))];
        });
        setHasMore(page.hasMore);
        loadedOlder.current = true;
      });
    } finally {
      loadingOlderNow.current = false;
      setLoadingOlder(false);
    }
  }, [chats, run]);

  return {
    chats,
    /** The open chat, older than every chat loaded; listed after them. */
    beyondLoaded,
    hasMore,
    error,
    creating,
    loadingOlder,
    create,
    rename,
    remove,
    loadMore,
    dismissError: () => setError(null),
  };
}
