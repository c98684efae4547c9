"use client";

import { useEffect, useRef } from "react";

/**
 * The home page's composer creates a chat, then hands the message to the chat's page, which
 * sends it as the chat's first turn (so it streams there like any other). Session storage
 * carries it across the navigation without putting the text in the URL.
 */
const KEY_PREFIX = "fold:first-message:";

export function stashFirstMessage(chatId: string, text: string): void {
  sessionStorage.setItem(`${KEY_PREFIX}${chatId}`, text);
}

/** Sends a stashed first message once, when the chat opens. */
export function useFirstMessage(chatId: string, send: (text: string) => void): void {
  const sendRef = useRef(send);
  sendRef.current = send;
  useEffect(() => {
    const key = `${KEY_PREFIX}${chatId}`;
    const text = sessionStorage.getItem(key);
    if (text === null) return;
    // Taken before sending: a second run of this effect finds nothing to send twice.
    sessionStorage.removeItem(key);
    sendRef.current(text);
  }, [chatId]);
}
