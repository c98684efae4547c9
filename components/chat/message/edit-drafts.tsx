"use client";

import { createContext, type ReactNode, useContext, useRef, useState } from "react";

/**
 * Open edits of the user's messages, by message id, for as long as the timeline is mounted.
 * The timeline is virtualized: a message scrolled far enough away leaves the DOM, and an edit
 * box kept in its own state would lose what was typed in it.
 */
const EditDrafts = createContext<Map<string, string> | null>(null);

export function EditDraftsProvider({ children }: { children: ReactNode }) {
  const drafts = useRef(new Map<string, string>());
  return <EditDrafts.Provider value={drafts.current}>{children}</EditDrafts.Provider>;
}

/**
 * A message's edit: whether its box is open and what it holds, kept beside the timeline (or in
 * the component alone, outside a provider) so that it survives the row leaving the DOM.
 */
export function useEditDraft(messageId: string) {
  const drafts = useContext(EditDrafts);
  const [draft, setDraftState] = useState<string | null>(() => drafts?.get(messageId) ?? null);
  const setDraft = (next: string | null) => {
    if (next === null) drafts?.delete(messageId);
    else drafts?.set(messageId, next);
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
