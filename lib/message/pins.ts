import type { FoldUIMessage } from "./ui-message";

/** Ids of the messages the user pinned (issue 14): the compaction path keeps them verbatim. */
export function pinnedIdsOf(history: readonly FoldUIMessage[]): ReadonlySet<string> {
  const ids = new Set<string>();
  for (const message of history) if (message.metadata?.pinned === true) ids.add(message.id);
  return ids;
}
