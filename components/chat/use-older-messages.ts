"use client";

import { useCallback, useRef, useState } from "react";
import { type FoldUIMessage, rowToUIMessage } from "@/lib/message/ui-message";
import { apiFetch } from "../outage/api-fetch";
import { toast } from "../ui/toast";

type StoredRow = Parameters<typeof rowToUIMessage>[0];

/** Messages per request when scrolling back: the API's largest page. */
export const OLDER_PAGE_LIMIT = 200;

/**
 * The part of a long chat above the page it opened on, fetched a page at a time as the user
 * scrolls up. Kept apart from useChat's messages, so streaming a reply never copies thousands
 * of messages; `takeAll` hands them over when useChat must see the whole history (an edit).
 */
export function useOlderMessages(chatId: string, initialHasMore: boolean) {
  const [older, setOlder] = useState<FoldUIMessage[]>([]);
  const [hasMore, setHasMore] = useState(initialHasMore);
  const [loading, setLoading] = useState(false);
  const busy = useRef(false);
  /** Counts restarts: a page asked for before one is of another version, and goes unused. */
  const generation = useRef(0);

  /** Fetches the page before `oldestLoaded`, the oldest message on screen. */
  const loadOlder = useCallback(
    async (oldestLoaded: string | undefined) => {
      if (busy.current || !hasMore || !oldestLoaded) return;
      busy.current = true;
      setLoading(true);
      const asked = generation.current;
      try {
        const query = `?before=${encodeURIComponent(oldestLoaded)}&limit=${OLDER_PAGE_LIMIT}`;
        const response = await apiFetch(`/api/chats/${chatId}${query}`, { cache: "no-store" });
        if (response.status === 409) {
          // Its page is of a version put aside elsewhere: the server says to reload.
          const body = (await response.json().catch(() => null)) as {
            error?: { message?: string };
          } | null;
          if (generation.current !== asked) return;
          toast.error(body?.error?.message ?? "This chat changed elsewhere. Reload it.");
          // Asking again would be refused again: nothing more loads until the reload.
          setHasMore(false);
          return;
        }
        if (!response.ok) throw new Error(`status ${response.status}`);
        const page = (await response.json()) as { messages: StoredRow[]; hasMore: boolean };
        if (generation.current !== asked) return;
        setOlder((list) => [...page.messages.map(rowToUIMessage), ...list]);
        setHasMore(page.hasMore);
      } catch {
        if (generation.current !== asked) return;
        toast.error("Older messages could not be loaded. Scroll up to try again.");
      } finally {
        busy.current = false;
        setLoading(false);
      }
    },
    [chatId, hasMore],
  );

  /** Empties the list and returns what it held. */
  const takeAll = useCallback(() => {
    const all = older;
    setOlder([]);
    return all;
  }, [older]);

  /**
   * Drops the pages held, and any on its way (a version switch shows another history): the page
   * shown now begins the chat as far as `more` says it does.
   */
  const restart = useCallback((more: boolean) => {
    generation.current += 1;
    setOlder([]);
    setHasMore(more);
  }, []);

  /** Changes one loaded message in place (a pin set on a message scrolled up to). */
  const update = useCallback(
    (messageId: string, change: (message: FoldUIMessage) => FoldUIMessage) =>
      setOlder((list) => list.map((m) => (m.id === messageId ? change(m) : m))),
    [],
  );

  return {
    older,
    hasMore,
    loading,
    loadOlder,
    takeAll,
    restart,
    /** Keeps what its argument picks of the loaded messages (the part a stored page does not hold). */
    keep: setOlder,
    update,
  };
}
