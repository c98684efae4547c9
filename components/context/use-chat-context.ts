"use client";

import { useEffect, useRef, useState } from "react";
import type { ChatContext } from "@/lib/chat/context";
import { errorText } from "../memory/use-chat-memory";
import { apiFetch } from "../outage/api-fetch";
import { useRecoveryKey } from "../outage/use-database-outage";

/**
 * After a reading failed, the next tries, in ms (the last one repeats): a ring that could not be
 * read (a provider slow to list its models, a restart) fills in by itself once it can be.
 */
const RETRY_AFTER_MS = [3_000, 10_000, 30_000, 60_000];

/**
 * The chat's context usage for a model; refetched when the model or `refreshKey` changes, and
 * again after a while when a reading failed for want of an answer (not when it was refused).
 */
export function useChatContext(chatId: string, modelId: string | null, refreshKey: number) {
  const [context, setContext] = useState<ChatContext | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** Failed readings in a row: how long the next try waits. */
  const failures = useRef(0);
  /** Bumped to try again after a failed reading. */
  const [retryKey, setRetryKey] = useState(0);
  const recovered = useRecoveryKey();

  // biome-ignore lint/correctness/useExhaustiveDependencies: refreshKey, recovered and retryKey are the signals to refetch
  useEffect(() => {
    if (!modelId) return;
    const controller = new AbortController();
    let retry: ReturnType<typeof setTimeout> | undefined;
    /** The server refused the reading (a model no longer allowed): asking again changes nothing. */
    let refused = false;
    apiFetch(`/api/chats/${chatId}/context?modelId=${encodeURIComponent(modelId)}`, {
      signal: controller.signal,
    })
      .then(async (response) => {
        if (!response.ok) {
          refused = response.status < 500;
          // The server says why (a model no longer allowed, an outage).
          throw new Error(
            await errorText(response, `Context usage unavailable (${response.status})`),
          );
        }
        setContext((await response.json()) as ChatContext);
        setError(null);
        failures.current = 0;
      })
      .catch((e: unknown) => {
        if (controller.signal.aborted) return;
        setError(e instanceof Error ? e.message : "Context usage unavailable");
        // Another model's numbers are not this one's: keep only the same model's last reading.
        setContext((shown) => (shown?.modelId === modelId ? shown : null));
        if (refused) return;
        const wait = RETRY_AFTER_MS[Math.min(failures.current, RETRY_AFTER_MS.length - 1)];
        failures.current += 1;
        retry = setTimeout(() => setRetryKey((key) => key + 1), wait);
      });
    return () => {
      controller.abort();
      clearTimeout(retry);
    };
  }, [chatId, modelId, refreshKey, recovered, retryKey]);

  // Until this model's reading arrives, the last one (another model's) says nothing of it.
  const current = context?.modelId === modelId ? context : null;
  return { context: current, error, setContext };
}
