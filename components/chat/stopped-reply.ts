import { foldEntry, keptOfStopped } from "@/lib/message/stopped-reply";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { wroteSomething } from "./message/tool-state";
import { isCompactionEntry } from "./stored-tail";

/**
 * The timeline once a stopped reply's stream has ended, as the server stores it
 * (lib/message/stopped-reply.ts): a reply that wrote nothing leaves the message unanswered (No
 * reply, with Retry), and the trace of a fold stored before the stop stays as that fold's entry.
 * Shown as a Stopped reply instead, it would turn into No reply at the next reload.
 */
export function withStoppedReplyAsStored(
  shown: FoldUIMessage[],
  reply: FoldUIMessage,
): FoldUIMessage[] {
  if (reply.role !== "assistant" || reply.metadata?.stopped !== true) return shown;
  const kept = keptOfStopped(reply.parts);
  const at = shown.findLastIndex((m) => m.id === reply.id);
  if (kept.kind === "reply" || at < 0) return shown;
  const entry = kept.kind === "fold" ? [foldEntry(reply.id, kept.parts)] : [];
  return [...shown.slice(0, at), ...entry, ...shown.slice(at + 1)];
}

/** A reply begun and nothing in it: no text, no finished tool call, not marked Stopped. */
export function isEmptyReply(message: FoldUIMessage): boolean {
  return (
    message.role === "assistant" &&
    !isCompactionEntry(message) &&
    !message.metadata?.stopped &&
    !wroteSomething(message)
  );
}
