"use client";

import { useEffect, useState } from "react";
import type { ChatContext } from "@/lib/chat/context";
import { errorText } from "../memory/use-chat-memory";
import { apiFetch } from "../outage/api-fetch";
import { useRecoveryKey } from "../outage/use-database-outage";

/** The chat's context usage for a model; refetched when the model or `refreshKey` changes. */
export function useChatContext(chatId: string, modelId: string | null, refreshKey: number) {
  const [context, setContext] = useState<ChatContext | null>(null);
  const [error, setError] = useState<string | null>(null);
  const recovered = useRecoveryKey();

  // biome-ignore lint/correctness/useExhaustiveDependencies: refreshKey and recovered are the signals to refetch
  useEffect(() => {
    if (!modelId) return;
    const controller = new AbortController();
    apiFetch(`/api/chats/${chatId}/context?modelId=${encodeURIComponent(modelId)}`, {
      signal: controller.signal,
    })
      .then(async (response) => {
        if (!response.ok) {
          // The server says why (a model no longer allowed, an outage).
          throw new Error(
            await errorText(response, `Context usage unavailable (${response.status})`),
          );
        }
        setContext((await response.json()) as ChatContext);
        setError(null);
      })
      .catch((e: unknown) => {
        if (controller.signal.aborted) return;
        setError(e instanceof Error ? e.message : "Context usage unavailable");
        // Another model's numbers are not this one's: keep only the same model's last reading.
        setContext((shown) => (shown?.modelId === modelId ? shown : null));
      });
    return () => controller.abort();
  }, [chatId, modelId, refreshKey, recovered]);

  // Until this model's reading arrives, the last one (another model's) says nothing of it.
  const current = context?.modelId === modelId ? context : null;
  return { context: current, error, setContext };
}
