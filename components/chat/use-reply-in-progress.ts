"use client";

import { useCallback, useEffect, useState } from "react";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { fetchStoredPage } from "./stored-tail";

/** How often a page opened mid-reply asks whether the reply is stored yet. */
const POLL_MS = 1_500;

/**
 * A page loaded while a reply is still being written (a reload, a second tab)
 * must not offer to answer the message again: it says a reply is on its way
 * and asks the server until the turn is over, then shows what was stored —
 * the reply, or nothing, and then the message is an orphan to retry. `follow`
 * starts the same for a reply the page learns of later (a send refused because
 * another tab's reply is being written).
 */
export function useReplyInProgress(
  chatId: string,
  initiallyReplying: boolean,
  setMessages: (messages: FoldUIMessage[]) => void,
): { replying: boolean; follow: () => void } {
  const [replying, setReplying] = useState(initiallyReplying);
  useEffect(() => {
    if (!replying) return;
    const controller = new AbortController();
    const timer = setInterval(() => {
      const gone = () => setReplying(false);
      void fetchStoredPage(chatId, controller.signal, gone).then((page) => {
        if (!page || page.replying) return;
        setMessages(page.messages);
        setReplying(false);
      });
    }, POLL_MS);
    return () => {
      clearInterval(timer);
      controller.abort();
    };
  }, [chatId, replying, setMessages]);
  return { replying, follow: useCallback(() => setReplying(true), []) };
}
