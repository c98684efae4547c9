"use client";

import { useEffect } from "react";
import { type FoldUIMessage, rowToUIMessage } from "@/lib/message/ui-message";
import type { LimitNotice } from "./limit-notice";

type StoredRow = Parameters<typeof rowToUIMessage>[0];

/**
 * A refused send (a quota, a rate limit) stored nothing, but the chat already shows the message
 * it tried to send: put back what the server holds, so the timeline does not show a message
 * that will be gone after a reload.
 */
export function useStoredMessagesAfterLimit(
  chatId: string,
  limit: LimitNotice | null,
  setMessages: (messages: FoldUIMessage[]) => void,
): void {
  useEffect(() => {
    if (!limit) return;
    const controller = new AbortController();
    fetch(`/api/chats/${chatId}`, { signal: controller.signal, cache: "no-store" })
      .then(async (response) => {
        if (!response.ok) return;
        const { messages } = (await response.json()) as { messages: StoredRow[] };
        setMessages(messages.map(rowToUIMessage));
      })
      .catch(() => undefined);
    return () => controller.abort();
  }, [chatId, limit, setMessages]);
}
