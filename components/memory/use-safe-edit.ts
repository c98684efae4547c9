"use client";

import { useCallback, useState } from "react";
import { apiFetch } from "../outage/api-fetch";

/** What may move later messages to an older version of the chat. */
export type Rewrite =
  | { kind: "edit"; messageId: string; text: string }
  | { kind: "regenerate"; messageId: string };

type Pending = { rewrite: Rewrite; laterMessages: number };

/**
 * An edit or a regenerate that would move later messages away asks first, with the server's
 * count of them (the browser may not hold every message); one that moves nothing is sent at once.
 */
export function useSafeEdit(chatId: string, send: (rewrite: Rewrite) => void) {
  const [pending, setPending] = useState<Pending | null>(null);

  const request = useCallback(
    async (rewrite: Rewrite, laterShown: number) => {
      const response = await apiFetch(
        `/api/chats/${chatId}/branches?messageId=${encodeURIComponent(rewrite.messageId)}`,
      );
      const later = response.ok
        ? ((await response.json()) as { edit?: { laterMessages: number } }).edit?.laterMessages
        : undefined;
      // Unknown to the server (not stored yet): the count the browser shows.
      const count = later ?? laterShown;
      if (count === 0) send(rewrite);
      else setPending({ rewrite, laterMessages: count });
    },
    [chatId, send],
  );

  return {
    pending: pending ? { kind: pending.rewrite.kind, laterMessages: pending.laterMessages } : null,
    request,
    confirm: () => {
      if (pending) send(pending.rewrite);
      setPending(null);
    },
    cancel: () => setPending(null),
  };
}
