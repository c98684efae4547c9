"use client";

import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from "ai";
import { useEffect, useRef, useState } from "react";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { apiFetch } from "../outage/api-fetch";

/**
 * A background compaction of an open chat, shown as it runs: while the
 * context endpoint says the chat is compacting, follow its live trace
 * (GET /api/chats/:id/compaction, served by whichever instance) and return
 * the timeline entry it is building; when it ends, hand the finished entry
 * to `onDone` (it is stored by then) and return null again. When there was
 * nothing left to follow (it ended before the page asked), `onDone` gets
 * null: what it stored is in the chat's stored messages.
 */
export function useLiveCompaction(
  chatId: string,
  compacting: boolean,
  onDone: (entry: FoldUIMessage | null) => void,
): FoldUIMessage | null {
  const [live, setLive] = useState<FoldUIMessage | null>(null);
  const onDoneRef = useRef(onDone);
  onDoneRef.current = onDone;
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  useEffect(() => {
    if (!compacting) return;
    const controller = new AbortController();
    let ended = false;
    void follow(chatId, controller.signal, setLive)
      .then((entry) => {
        if (!controller.signal.aborted) onDoneRef.current(entry);
      })
      // A trace that cannot be followed costs the live view only: the entry is stored anyway.
      .catch(() => undefined)
      .finally(() => {
        ended = true;
        if (!controller.signal.aborted) setLive(null);
      });
    return () => {
      controller.abort();
      // Left before its end: the chat's reading no longer says it compacts (another model's
      // reading came, or it ended meanwhile). The card goes, and what it stored is read instead.
      if (ended || !mounted.current) return;
      setLive(null);
      onDoneRef.current(null);
    };
  }, [chatId, compacting]);

  return live;
}

/** Reads the live trace to its end; the finished entry, or null when none was running. */
async function follow(
  chatId: string,
  signal: AbortSignal,
  show: (message: FoldUIMessage) => void,
): Promise<FoldUIMessage | null> {
  const response = await apiFetch(`/api/chats/${chatId}/compaction`, { signal });
  if (response.status !== 200 || !response.body) return null;
  const chunks = parseJsonEventStream({
    stream: response.body,
    schema: uiMessageChunkSchema,
  }).pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (result.success) controller.enqueue(result.value);
      },
    }),
  );
  let last: FoldUIMessage | null = null;
  for await (const message of readUIMessageStream<FoldUIMessage>({ stream: chunks })) {
    last = message;
    show(message);
  }
  // Only a finished trace is kept in the timeline (a failed fold is retried by the next turn).
  return last?.parts.some((part) => "output" in part && part.output !== undefined) ? last : null;
}
