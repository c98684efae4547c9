"use client";

import { useEffect } from "react";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import type { LimitNotice } from "./limit-notice";
import { fetchStoredPage } from "./stored-tail";

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
      if (page) setMessages(page.messages);
    });
    return () => controller.abort();
  }, [chatId, limit, setMessages]);
}
