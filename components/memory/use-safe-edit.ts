"use client";

import { useCallback, useRef, useState } from "react";
import { apiFetch } from "../outage/api-fetch";

/**
 * What may move later messages to an older version of the chat. `throughId`, once the server
 * counted them: the chat's last message they run through, which the request names, so a chat
 * gone on since (another tab's turn) refuses it instead of moving more than was asked about.
 */
export type Rewrite = (
  | { kind: "edit"; messageId: string; text: string }
  | { kind: "regenerate"; messageId: string }
) & { throughId?: string };

type Pending = { rewrite: Rewrite; laterMessages: number; settle: (sent: boolean) => void };

/**
 * An edit or a regenerate that would move later messages away asks first, with the server's
 * count of them (the browser may not hold every message); one that moves nothing is sent at once.
 * `request` says whether the rewrite went: an edit cancelled at the question keeps its box.
 */
export function useSafeEdit(chatId: string, send: (rewrite: Rewrite) => boolean) {
  const [pending, setPendingState] = useState<Pending | null>(null);
  // Read by clicks that come before the next render: a confirmation sends once.
  const pendingNow = useRef<Pending | null>(null);
  const setPending = useCallback((next: Pending | null) => {
    pendingNow.current = next;
    setPendingState(next);
  }, []);
  // One rewrite at a time: a double click on Regenerate asks (and sends) once.
  const asking = useRef(false);
  // Sent with what the page holds when it goes (a version switch may land while it asks).
  const sendNow = useRef(send);
  sendNow.current = send;

  const request = useCallback(
    async (rewrite: Rewrite, laterShown: number): Promise<boolean> => {
      if (asking.current) return false;
      asking.current = true;
      let count: number;
      let counted: Rewrite = rewrite;
      try {
        const response = await apiFetch(
          `/api/chats/${chatId}/branches?messageId=${encodeURIComponent(rewrite.messageId)}`,
        );
        const edit = response.ok
          ? ((await response.json()) as { edit?: { laterMessages: number; throughId: string } })
              .edit
          : undefined;
        // Unknown to the server (not stored yet): the count the browser shows.
        count = edit?.laterMessages ?? laterShown;
        if (edit?.throughId) counted = { ...rewrite, throughId: edit.throughId };
      } finally {
        asking.current = false;
      }
      // Not sent when a reply started meanwhile (`send` says so): the edit keeps its box.
      if (count === 0) return sendNow.current(counted);
      return new Promise<boolean>((settle) => {
        pendingNow.current?.settle(false);
        setPending({ rewrite: counted, laterMessages: count, settle });
      });
    },
    [chatId, setPending],
  );

  return {
    pending: pending ? { kind: pending.rewrite.kind, laterMessages: pending.laterMessages } : null,
    request,
    confirm: () => {
      const confirmed = pendingNow.current;
      setPending(null);
      if (confirmed) confirmed.settle(sendNow.current(confirmed.rewrite));
    },
    cancel: () => {
      pendingNow.current?.settle(false);
      setPending(null);
    },
  };
}
