import type { UIMessage } from "ai";

/**
 * Messages as read from the database (rowToUIMessage). Nothing edits them in place — views
 * and edits copy — so what is derived from their content (count units, lib/context) can be
 * kept per object for as long as the object lives.
 */
const storedMessages = new WeakSet<UIMessage>();

export function markStored<M extends UIMessage>(message: M): M {
  storedMessages.add(message);
  return message;
}

export function isStored(message: UIMessage): boolean {
  return storedMessages.has(message);
}
