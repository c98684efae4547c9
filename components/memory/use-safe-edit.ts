"use client";

import { useCallback, useState } from "react";
import { apiFetch } from "../outage/api-fetch";

type Pending = { messageId: string; text: string; laterMessages: number };

/**
 * An edit that would move later messages away asks first, with the server's count of them
 * (the browser may not hold every message); one that moves nothing is sent at once.
 */
export function useSafeEdit(chatId: string, send: (messageId: string, text: string) => void) {
  const [pending, setPending] = useState<Pending | null>(null);

  const request = useCallback(
    async (messageId: string, text: string, laterShown: number) => {
      const response = await apiFetch(
        `/api/chats/${chatId}/branches?messageId=${encodeURIComponent(messageId)}`,
      );
      const later = response.ok
        ? ((await response.json()) as { edit?: { laterMessages: number } }).edit?.laterMessages
        : undefined;
      // Unknown to the server (not stored yet): the count the browser shows.
      const count = later ?? laterShown;
      if (count === 0) send(messageId, text);
      else setPending({ messageId, text, laterMessages: count });
    },
    [chatId, send],
  );

  return {
    laterMessages: pending?.laterMessages ?? null,
    request,
    confirm: () => {
      if (pending) send(pending.messageId, pending.text);
      setPending(null);
    },
    cancel: () => setPending(null),
  };
}
