import type { UIMessage } from "ai";

/**
 * Messages as read from the database (rowToUIMessage). Nothing edits them in place — views
 * and edits copy — so what is derived from their content (count units, lib/context) can be
 * kept per object for as long as the object lives, and, when the row came with a content key
 * (lib/db/queries/messages `KeyedMessage`), per key across the objects of later reads.
 */
const storedMessages = new WeakMap<UIMessage, string | null>();

export function markStored<M extends UIMessage>(message: M, contentKey?: string): M {
  storedMessages.set(message, contentKey ?? null);
  return message;
}

export function isStored(message: UIMessage): boolean {
  return storedMessages.has(message);
}

/** The key of a stored message's content, when its row was read with one. */
export function storedContentKey(message: UIMessage): string | undefined {
  return storedMessages.get(message) ?? undefined;
}
