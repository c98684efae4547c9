"use client";

import { createContext, type ReactNode, useContext, useEffect, useRef, useState } from "react";

/**
 * Open edits of the user's messages, by message id, for as long as the timeline is mounted.
 * The timeline is virtualized: a message scrolled far enough away leaves the DOM, and an edit
 * box kept in its own state would lose what was typed in it.
 */
export type EditDrafts = {
  drafts: Map<string, string>;
  /** The rows showing an edit box, each told when its draft is opened from outside. */
  rows: Map<string, (text: string) => void>;
};

export function createEditDrafts(): EditDrafts {
  return { drafts: new Map(), rows: new Map() };
}

/**
 * Opens a message's edit box again holding `text` (an edit the server refused): at once where
 * the message is shown, or when it next scrolls into view.
 */
export function reopenEdit(store: EditDrafts, messageId: string, text: string): void {
  store.drafts.set(messageId, text);
  store.rows.get(messageId)?.(text);
}

const EditDraftsContext = createContext<EditDrafts | null>(null);

export function EditDraftsProvider({
  store,
  children,
}: {
  /** The page's drafts, when it reopens edits itself; else the timeline keeps its own. */
  store?: EditDrafts;
  children: ReactNode;
}) {
  const own = useRef<EditDrafts | null>(null);
  own.current ??= createEditDrafts();
  return (
    <EditDraftsContext.Provider value={store ?? own.current}>{children}</EditDraftsContext.Provider>
  );
}

/**
 * A message's edit: whether its box is open and what it holds, kept beside the timeline (or in
 * the component alone, outside a provider) so that it survives the row leaving the DOM.
 */
export function useEditDraft(messageId: string) {
  const store = useContext(EditDraftsContext);
  const [draft, setDraftState] = useState<string | null>(
    () => store?.drafts.get(messageId) ?? null,
  );
  useEffect(() => {
    if (!store) return;
    const reopened = (text: string) => setDraftState(text);
    store.rows.set(messageId, reopened);
    return () => {
      if (store.rows.get(messageId) === reopened) store.rows.delete(messageId);
    };
  }, [store, messageId]);
  const setDraft = (next: string | null) => {
    if (next === null) store?.drafts.delete(messageId);
    else store?.drafts.set(messageId, next);
    setDraftState(next);
  };
  return {
    editing: draft !== null,
    draft: draft ?? "",
    /** Opens the box holding `text`. */
    open: (text: string) => setDraft(text),
    change: (text: string) => setDraft(text),
    /** Closes the box; what it held is gone. */
    close: () => setDraft(null),
  };
}
