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
