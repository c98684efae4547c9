"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { MESSAGE_MAX_CHARS } from "@/lib/message/limits";
import { apiFetch } from "../outage/api-fetch";
import { useHoverless } from "../ui/use-hoverless";
import { focusMessageBoxOnArrival } from "./arrival-focus";
import { Composer } from "./composer";
import { stashFirstMessage } from "./first-message";
import { ModelPicker } from "./model-picker";
import { useModels } from "./use-models";

/** The home page's message box: the first message starts a chat and is sent there. */
export function HomeComposer() {
  const router = useRouter();
  const models = useModels();
  const [picked, setPicked] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const touch = useHoverless();
  const [error, setError] = useState<string | null>(null);
  const [returned, setReturned] = useState<{ text: string; at: number } | null>(null);
  const modelId = picked ?? (models.status === "ready" ? models.defaultModelId : null);

  async function start(text: string) {
    setCreating(true);
    setError(null);
    try {
      const response = await apiFetch("/api/chats", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(modelId ? { modelId } : {}),
      });
      const body = (await response.json()) as
        | { chat: { id: string } }
        | { error: { message: string } };
      if (!response.ok || "error" in body) {
        throw new Error("error" in body ? body.error.message : "The chat could not be created.");
      }
      stashFirstMessage(body.chat.id, text);
      // This box goes with the page: the chat's takes the keyboard, for the next message.
      focusMessageBoxOnArrival();
      router.push(`/chat/${body.chat.id}`);
      router.refresh();
    } catch (e) {
      setError(e instanceof Error ? e.message : "The chat could not be created.");
      setReturned({ text, at: Date.now() });
      setCreating(false);
    }
  }

  return (
    <div className="w-full max-w-3xl">
      {error ? (
        <p role="alert" className="mx-4 mb-2 rounded-lg bg-red-50 px-3 py-2 text-sm text-red-700">
          {error}
        </p>
      ) : null}
      <Composer
        onSend={(text) => void start(text)}
        onStop={() => undefined}
        busy={false}
        disabled={creating || models.status !== "ready" || modelId === null}
        returned={returned}
        placeholder={touch ? "Start a new chat…" : "Start a new chat… (Enter to send)"}
        maxChars={MESSAGE_MAX_CHARS}
        focusOnOpen
        toolbar={
          models.status === "ready" ? (
            <ModelPicker models={models.models} value={modelId} onChange={setPicked} />
          ) : (
            <span className="text-xs text-muted">
              {models.status === "loading" ? "Loading models…" : models.message}
            </span>
          )
        }
      />
    </div>
  );
}
