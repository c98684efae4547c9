"use client";

import { useCallback, useEffect, useState } from "react";
import type { BranchSwitch } from "@/lib/chat/branches";
import type { ChatMemory } from "@/lib/chat/memory";
import { apiFetch } from "../outage/api-fetch";
import { useRecoveryKey } from "../outage/use-database-outage";

const JSON_HEADERS = { "content-type": "application/json" };
const READ_FAILED = "What the model remembers of this chat could not be read.";

/** A failed call's error body (lib/errors.ts): its code and its own sentence, when it has them. */
export async function errorOf(
  response: Response,
): Promise<{ code?: string; message?: string } | undefined> {
  const body = (await response.json().catch(() => null)) as {
    error?: { code?: string; message?: string };
  } | null;
  return body?.error;
}

/** A failed call's own sentence (lib/errors.ts), or a generic one. */
export async function errorText(response: Response, fallback: string): Promise<string> {
  return (await errorOf(response))?.message ?? fallback;
}

/**
 * What the model remembers of a chat (summary, ledger, watermark, pins) and the ‹ n/m ›
 * switches of its edited messages; refetched whenever `refreshKey` changes, or the chat's saved
 * model (`savedModelId`: the room for notes is that model's).
 */
export function useChatMemory(chatId: string, refreshKey: number, savedModelId: string | null) {
  const [memory, setMemory] = useState<ChatMemory | null>(null);
  const [branches, setBranches] = useState<BranchSwitch[]>([]);
  // Why the last reading of the memory failed: the panel says so (with Retry) instead of
  // showing an unread memory as an empty one.
  const [readProblem, setReadProblem] = useState<string | null>(null);
  const [retries, setRetries] = useState(0);
  const recovered = useRecoveryKey();

  // biome-ignore lint/correctness/useExhaustiveDependencies: refreshKey, savedModelId, retries and recovered are the signals to refetch
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    void Promise.all([
      apiFetch(`/api/chats/${chatId}/memory`, { signal }),
      apiFetch(`/api/chats/${chatId}/branches`, { signal }),
    ])
      .then(async ([memoryResponse, branchesResponse]) => {
        if (memoryResponse.ok) {
          setMemory(((await memoryResponse.json()) as { memory: ChatMemory }).memory);
          setReadProblem(null);
        } else {
          setReadProblem(
            `${READ_FAILED} ${await errorText(memoryResponse, "Try again in a moment.")}`,
          );
        }
        if (branchesResponse.ok) {
          setBranches(((await branchesResponse.json()) as { branches: BranchSwitch[] }).branches);
        }
      })
      .catch(() => {
        if (!signal.aborted) setReadProblem(`${READ_FAILED} Try again in a moment.`);
      });
    return () => controller.abort();
  }, [chatId, refreshKey, savedModelId, recovered, retries]);

  const retryRead = useCallback(() => setRetries((n) => n + 1), []);

  const pin = useCallback(
    async (messageId: string, pinned: boolean): Promise<string | null> => {
      const response = await apiFetch(`/api/chats/${chatId}/pins`, {
        method: "PUT",
        headers: JSON_HEADERS,
        body: JSON.stringify({ messageId, pinned }),
      });
      if (!response.ok) return errorText(response, "The message could not be pinned.");
      setMemory(((await response.json()) as { memory: ChatMemory }).memory);
      return null;
    },
    [chatId],
  );

  return { memory, setMemory, readProblem, retryRead, branches, setBranches, pin };
}

export { JSON_HEADERS };
