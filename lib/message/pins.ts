import type { Pinned } from "@/lib/compaction/trim";
import type { MessageMetadata } from "./stats";
import type { FoldUIMessage } from "./ui-message";

/**
 * Ids of the messages the compaction path keeps verbatim (issue 14): the ones the user pinned,
 * and ones unpinned since that no summary tells yet (`foldPending`), until a compaction folds
 * them.
 */
export function pinnedIdsOf(history: readonly FoldUIMessage[]): ReadonlySet<string> {
  return idsFlagged(history, "pinned");
}

/** Ids of the messages unpinned but not folded yet: the next compaction folds them. */
export function foldPendingIdsOf(history: readonly FoldUIMessage[]): ReadonlySet<string> {
  return idsFlagged(history, "foldPending");
}

function idsFlagged(
  history: readonly FoldUIMessage[],
  flag: "pinned" | "foldPending",
): ReadonlySet<string> {
  const ids = new Set<string>();
  for (const message of history) if (message.metadata?.[flag] === true) ids.add(message.id);
  return ids;
}

/** Whether the user has the message pinned (one unpinned but not folded yet is not). */
export function isPinnedByUser(metadata: MessageMetadata | undefined): boolean {
  return metadata?.pinned === true && metadata.foldPending !== true;
}

/** A message's metadata once pinned or unpinned, as the server stores it (lib/chat/memory.ts). */
export function pinnedAs(
  metadata: MessageMetadata | undefined,
  pinned: boolean,
): MessageMetadata | undefined {
  if (pinned) return { ...metadata, pinned: true, foldPending: undefined, unpinned: undefined };
  return metadata?.pinned === true ? { ...metadata, foldPending: true } : metadata;
}

/**
 * What the user pinned, as in-memory trimming recognises it (lib/compaction/trim.ts): a user
 * message's text, a pinned reply's text step by step (pinnedTextOf), and the ids of the tool
 * calls that reply made, whose results reach the model in tool messages of their own.
 */
export function pinnedOf(view: readonly FoldUIMessage[]): Pinned {
  const texts = new Set<string>();
  const toolCallIds = new Set<string>();
  const textOf = (parts: FoldUIMessage["parts"]) =>
    parts.map((part) => (part.type === "text" ? part.text : "")).join("");
  for (const message of view) {
    if (!isPinnedByUser(message.metadata)) continue;
    if (message.role === "user") texts.add(textOf(message.parts));
    if (message.role !== "assistant") continue;
    // A pinned reply reaches the model as one message per step (its text, then its calls): each
    // is spared by its own text, as trimToFit reads it (pinnedTextOf), and its calls' results,
    // in tool messages of their own, by their call ids.
    const steps: FoldUIMessage["parts"][] = [[]];
    for (const part of message.parts) {
      if (part.type === "step-start") steps.push([]);
      else steps.at(-1)?.push(part);
      if ("toolCallId" in part && typeof part.toolCallId === "string")
        toolCallIds.add(part.toolCallId);
    }
    for (const step of steps) {
      const text = textOf(step);
      if (text.trim() !== "") texts.add(text);
    }
  }
  return { texts, toolCallIds };
}
