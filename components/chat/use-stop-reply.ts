"use client";

import { useCallback, useEffect, useRef } from "react";
import { apiFetch } from "../outage/api-fetch";

/** What Continue sends after a stopped reply: the model goes on from where it was cut. */
export const CONTINUE_TEXT = "Continue from where you stopped.";

/** How long Stop waits for the server's stopped reply before dropping the stream itself. */
const LOCAL_STOP_AFTER_MS = 3_000;

/**
 * Stop asks the server to stop the reply — the model call is aborted on
 * whichever instance runs it (or, sent the moment after the message, as soon
 * as its turn begins), and what was written is stored as Stopped —
 * and lets the stream end by itself with that stopped reply. Only if the
 * server cannot be reached, or the stream does not end soon, does the page
 * drop the stream on its own.
 */
export function useStopReply(
  chatId: string,
  busy: boolean,
  stopLocally: () => void,
  /**
   * The user message whose reply runs or is on its way, and this page's request for it: named,
   * so that turn stops whether it listens yet or not (the server leaves a named stop pending
   * for it), and only that one.
   */
  answering: () => { messageId?: string; attemptId?: string },
  /** The server could not stop the reply (Stop cannot reach it): why, in its words. */
  onRefused?: (response: Response) => void,
) {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => {
    if (!busy) clearTimeout(timer.current);
  }, [busy]);
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    clearTimeout(timer.current);
    timer.current = setTimeout(stopLocally, LOCAL_STOP_AFTER_MS);
    const asked = answering();
    // An answer that comes once the page has moved on (it stopped on its own, and sent again)
    // is about the reply it asked to stop, not the one running now.
    const stillAsked = () => {
      const now = answering();
      return now.messageId === asked.messageId && now.attemptId === asked.attemptId;
    };
    apiFetch(`/api/chats/${chatId}/stop`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(asked),
    })
      .then((response) => {
        // Nothing is running on the server (the reply ended meanwhile): nothing to wait for.
        if ((!response.ok || response.status === 200) && stillAsked()) stopLocally();
        // Refused: the page lets the stream go, and says the reply may still be written.
        if (!response.ok && stillAsked()) onRefused?.(response);
      })
      .catch(() => {
        if (stillAsked()) stopLocally();
      });
  }, [chatId, stopLocally, answering, onRefused]);
}
