"use client";

import { useCallback, useEffect, useState } from "react";
import { toast } from "sonner";
import type { ChatContext } from "@/lib/chat/context";
import type { TraceOutput } from "@/lib/compaction/trace";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { errorText, JSON_HEADERS } from "../memory/use-chat-memory";
import { apiFetch } from "../outage/api-fetch";

/** A compaction this large (share of the window) asks first: the user loses verbatim detail. */
const CONFIRM_DROP_SHARE = 0.25;

/** Compact-now that found nothing to fold answers the click; the chat's timeline stays as it was. */
function nothingToFoldText(trace: TraceOutput): string {
  return trace.note?.includes("does not fit")
    ? "Nothing to summarize: the latest message alone is too long for this model."
    : "Nothing to summarize yet: the messages outside any summary are the recent ones, kept word for word.";
}

export type CompactState = "idle" | "confirm" | "queued" | "running";

/**
 * Compact now from the ring: deferred while a reply streams, confirmed only
 * when it would fold a large share of the window, then the ring and the
 * timeline update from the response.
 */
export function useCompactNow(options: {
  chatId: string;
  modelId: string | null;
  busy: boolean;
  context: ChatContext | null;
  onDone: (result: {
    trace: TraceOutput | null;
    message: FoldUIMessage | null;
    context: ChatContext;
  }) => void;
}) {
  const { chatId, modelId, busy, context, onDone } = options;
  const [state, setState] = useState<CompactState>("idle");
  const [error, setError] = useState<string | null>(null);

  const run = useCallback(async () => {
    setState("running");
    setError(null);
    try {
      const response = await apiFetch(`/api/chats/${chatId}/compact`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(modelId ? { modelId } : {}),
      });
      const body = (await response.json()) as
        | { trace: TraceOutput | null; message: FoldUIMessage | null; context: ChatContext }
        | { error: { code?: string; message: string } };
      // Stopped as asked: an answer, not a failure.
      if ("error" in body && body.error.code === "conflict:stopped") {
        toast(body.error.message);
        return;
      }
      if (!response.ok || "error" in body) {
        throw new Error(
          "error" in body ? body.error.message : `Compaction failed (${response.status})`,
        );
      }
      if (body.trace?.outcome === "skipped") toast(nothingToFoldText(body.trace));
      onDone(body);
    } catch (e) {
      setError(e instanceof Error ? e.message : "Compaction failed");
    } finally {
      setState("idle");
    }
  }, [chatId, modelId, onDone]);

  /**
   * Runs now, or asks first when it would fold a large share of the window — or when there is
   * no reading of the chat to tell (the ring is loading, or its request failed).
   */
  const start = useCallback(() => {
    if (!context) {
      setState("confirm");
      return;
    }
    const drop = context.projectedTokens - context.budget.target;
    if (drop > CONFIRM_DROP_SHARE * context.contextWindow) {
      setState("confirm");
      return;
    }
    void run();
  }, [context, run]);

  const request = useCallback(() => {
    if (state === "running") return;
    if (busy) {
      setState("queued");
      return;
    }
    start();
  }, [busy, start, state]);

  // A click made while streaming goes on when the reply is done, asking first as any would.
  useEffect(() => {
    if (!busy && state === "queued") start();
  }, [busy, state, start]);

  /** Stops the compaction this page started: the summarizer's request is dropped, nothing written. */
  const stop = useCallback(async () => {
    setError(null);
    const failed = "Compacting could not be stopped. Try again.";
    const response = await apiFetch(`/api/chats/${chatId}/stop`, {
      method: "POST",
      headers: JSON_HEADERS,
      body: "{}",
    }).catch(() => null);
    if (response?.ok) return;
    setError(response ? await errorText(response, failed) : failed);
  }, [chatId]);

  return {
    state,
    error,
    request,
    stop,
    confirm: run,
    // The dialog closes after Compact too (its Action closes it): only a question still open
    // is cancelled, never the compaction it started.
    cancel: () => setState((current) => (current === "confirm" ? "idle" : current)),
    dismissError: () => setError(null),
  };
}
