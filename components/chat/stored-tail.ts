import { type FoldUIMessage, rowToUIMessage } from "@/lib/message/ui-message";
import { apiFetch } from "../outage/api-fetch";

type StoredRow = Parameters<typeof rowToUIMessage>[0];

/** What GET /api/chats/:id says of a chat: its newest stored page, and whether a reply is still being written. */
export type StoredPage = { messages: FoldUIMessage[]; replying: boolean };

/**
 * The chat's newest stored page, or null when it cannot be read now; `onGone` hears of a chat
 * that is no longer there (deleted, in another tab), so a caller that polls can stop. Asked as
 * every API call is (apiFetch): a database outage shows its banner, and an account disabled
 * meanwhile goes to sign in.
 */
export async function fetchStoredPage(
  chatId: string,
  signal?: AbortSignal,
  onGone?: () => void,
): Promise<StoredPage | null> {
  try {
    const response = await apiFetch(`/api/chats/${chatId}`, { signal, cache: "no-store" });
    if (response.status === 404) onGone?.();
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

/**
 * The older pages shown in front of useChat's messages that a stored page leaves: all of them,
 * unless the page begins among them (useChat holds only the newest messages since an edit or a
 * regenerate, and pages scrolled back to since then reach into the stored page): then those
 * before its first message.
 */
export function olderBeforePage(
  older: FoldUIMessage[],
  shown: readonly FoldUIMessage[],
  page: readonly FoldUIMessage[],
): FoldUIMessage[] {
  const first = page[0];
  if (!first || shown.some((m) => m.id === first.id)) return older;
  const at = older.findIndex((m) => m.id === first.id);
  return at < 0 ? older : older.slice(0, at);
}

/**
 * Adds a background compaction's timeline entry where the server stores it: at the end, or,
 * while a reply is being written, before that reply (its turn stores the reply after the entry
 * lands). After it, the reply would read as finished (only the last message streams), and a
 * reload would show the two the other way round. An entry already shown is not added twice.
 */
export function withCompactionEntry(
  shown: FoldUIMessage[],
  entry: FoldUIMessage,
  replying: boolean,
): FoldUIMessage[] {
  if (shown.some((m) => m.id === entry.id)) return shown;
  const last = shown.at(-1);
  if (replying && last?.role === "assistant") return [...shown.slice(0, -1), entry, last];
  return [...shown, entry];
}

/**
 * Puts back the compaction entries (a note added, a fold) an edit, a regenerate or a Retry took
 * off the screen while the server kept them: before the reply it wrote, or at the end when no
 * reply came. `before` is what was shown before the request, so an older reply is not taken for
 * the new one.
 */
export function withEntriesPutBack(
  shown: FoldUIMessage[],
  entries: readonly FoldUIMessage[],
  before: readonly FoldUIMessage[],
): FoldUIMessage[] {
  const missing = entries.filter((entry) => !shown.some((m) => m.id === entry.id));
  if (missing.length === 0) return shown;
  const last = shown.at(-1);
  const replied =
    last?.role === "assistant" &&
    !last.metadata?.compaction &&
    !before.some((m) => m.id === last.id);
  return replied ? [...shown.slice(0, -1), ...missing, last] : [...shown, ...missing];
}

/** A compaction's timeline entry (a note added, a fold): not a reply and not a message of the chat's. */
export function isCompactionEntry(message: FoldUIMessage): boolean {
  return Boolean(message.metadata?.compaction);
}

/**
 * The user message a running reply answers: the last message shown, or the one before the
 * reply begun after it. Compaction entries do not count: a background fold's entry lands before
 * the streaming reply. Undefined when neither is a user message (a page following a reply
 * whose message it does not hold).
 */
export function messageBeingAnswered(shown: readonly FoldUIMessage[]): string | undefined {
  const [before, last] = shown.filter((m) => !isCompactionEntry(m)).slice(-2);
  if (last === undefined) return before?.role === "user" ? before.id : undefined;
  if (last.role === "user") return last.id;
  return before?.role === "user" ? before.id : undefined;
}
