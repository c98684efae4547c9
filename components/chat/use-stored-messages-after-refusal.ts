"use client";

import { useEffect } from "react";
import { fetchStoredPage, type StoredPage } from "./stored-tail";

/**
 * A send or an edit the server refused before its turn started (a quota, a rate limit, a model
 * no longer allowed, a chat busy elsewhere, an outage) stored nothing, but the chat already
 * shows the message it tried to send: put back what the server holds, so the timeline does not
 * show a message that will be gone after a reload. `refusal` is the server's answer, or null.
 */
export function useStoredMessagesAfterRefusal(
  chatId: string,
  refusal: object | null,
  /** The stored page, or null when it cannot be read now. */
  onStored: (page: StoredPage | null) => void,
): void {
  useEffect(() => {
    if (!refusal) return;
    const controller = new AbortController();
    void fetchStoredPage(chatId, controller.signal).then((page) => {
      if (!controller.signal.aborted) onStored(page);
    });
    return () => controller.abort();
  }, [chatId, refusal, onStored]);
}
