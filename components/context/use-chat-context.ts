"use client";

import { useEffect, useState } from "react";
import type { ChatContext } from "@/lib/chat/context";
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
        if (!response.ok) throw new Error(`Context usage unavailable (${response.status})`);
        setContext((await response.json()) as ChatContext);
        setError(null);
      })
      .catch((e: unknown) => {
        if (!controller.signal.aborted)
          setError(e instanceof Error ? e.message : "Context usage unavailable");
      });
    return () => controller.abort();
  }, [chatId, modelId, refreshKey, recovered]);

  return { context, error, setContext };
}
