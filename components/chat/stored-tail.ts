import { type FoldUIMessage, rowToUIMessage } from "@/lib/message/ui-message";

type StoredRow = Parameters<typeof rowToUIMessage>[0];

/** What GET /api/chats/:id says of a chat: its newest stored page, and whether a reply is still being written. */
export type StoredPage = { messages: FoldUIMessage[]; replying: boolean };

/** The chat's newest stored page, or null when it cannot be read now. */
export async function fetchStoredPage(
  chatId: string,
  signal?: AbortSignal,
): Promise<StoredPage | null> {
  try {
    const response = await fetch(`/api/chats/${chatId}`, { signal, cache: "no-store" });
    if (!response.ok) return null;
    const body = (await response.json()) as { messages: StoredRow[]; replying?: boolean };
    return { messages: body.messages.map(rowToUIMessage), replying: body.replying === true };
  } catch {
    return null;
  }
}

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
