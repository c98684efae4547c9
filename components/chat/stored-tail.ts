import type { FoldUIMessage } from "@/lib/message/ui-message";

/**
 * Puts the server's newest page of a chat over the end of what the browser shows: everything
 * before the page's first message stays, the rest is replaced by the page. When the page does
 * not overlap what is shown (the history was rewritten), the page alone is what is true.
 */
export function withStoredTail(shown: FoldUIMessage[], page: FoldUIMessage[]): FoldUIMessage[] {
  const first = page[0];
  if (!first) return page;
  const at = shown.findIndex((m) => m.id === first.id);
  return at < 0 ? page : [...shown.slice(0, at), ...page];
}
