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
    void fetchStoredPage(chatId, controller.signal).then((page) => {
      if (page) setMessages(page);
    });
    return () => controller.abort();
  }, [chatId, limit, setMessages]);
}

/** The chat's newest stored page, or null when it cannot be read now. */
export async function fetchStoredPage(
  chatId: string,
  signal?: AbortSignal,
): Promise<FoldUIMessage[] | null> {
  try {
    const response = await fetch(`/api/chats/${chatId}`, { signal, cache: "no-store" });
    if (!response.ok) return null;
    const { messages } = (await response.json()) as { messages: StoredRow[] };
    return messages.map(rowToUIMessage);
  } catch {
    return null;
  }
}
