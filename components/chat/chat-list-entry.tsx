"use client";

import { Check, Pencil, Trash2, X } from "lucide-react";
import Link from "next/link";
import { AlertDialog } from "radix-ui";
import { type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
import { isImeKey } from "../ui/keys";
import { LinkPending } from "../ui/link-pending";
import { buttonGhost, buttonPrimary } from "../ui/styles";
import type { ChatListItem } from "./use-chats";

/** Said under the title box when Save finds it empty: the chat keeps its title until given one. */
const EMPTY_TITLE_TEXT = "A chat needs a title.";

type Props = {
  chat: ChatListItem;
  active: boolean;
  onRename: (title: string) => void;
  onDelete: () => void;
};

export function ChatListEntry({ chat, active, onRename, onDelete }: Props) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(chat.title);
  const [hint, setHint] = useState<string | null>(null);
  const hintId = useId();
  const link = useRef<HTMLAnchorElement>(null);
  // The title box held focus: once it is gone, the entry's link takes it, not the page.
  const refocus = useRef(false);
  // Set once the box is closing: its removal may blur it, which is no second save.
  const closing = useRef(false);

  useEffect(() => {
    if (editing || !refocus.current) return;
    refocus.current = false;
    link.current?.focus();
  }, [editing]);

  /** Closes the title box; the entry's link takes focus unless the user moved it elsewhere. */
  function stopEditing(focusLink = true) {
    closing.current = true;
    refocus.current = focusLink;
    setEditing(false);
  }

  function save(focusLink = true) {
    const title = draft.trim();
    // Empty or spaces only: the box stays open and says why, rather than quietly keeping the
    // old title as if the rename had been taken.
    if (!title) {
      setHint(EMPTY_TITLE_TEXT);
      return;
    }
    stopEditing(focusLink);
    if (title !== chat.title) onRename(title);
    else setDraft(chat.title);
  }

  function cancel() {
    setDraft(chat.title);
    setHint(null);
    stopEditing();
  }

  function onKeyDown(event: KeyboardEvent<HTMLInputElement>) {
    if (isImeKey(event)) return;
    if (event.key === "Enter") save();
    if (event.key === "Escape") cancel();
  }

  if (editing) {
    return (
      <li
        data-chat-id={chat.id}
        className="flex flex-wrap items-center gap-1 rounded-lg bg-white px-2 py-1 shadow-sm"
        // Clicking or tabbing away keeps what was typed, as a title box elsewhere does; its
        // own Save and Cancel are inside.
        onBlur={(event) => {
          // Another window or tab took the focus: the box stays for when the user is back.
          if (!document.hasFocus()) return;
          if (closing.current || event.currentTarget.contains(event.relatedTarget)) return;
          save(false);
        }}
      >
        <input
          // biome-ignore lint/a11y/noAutofocus: the user just asked to rename this chat
          autoFocus
          aria-label="Chat title"
          dir="auto"
          value={draft}
          maxLength={200}
          aria-invalid={hint ? true : undefined}
          aria-describedby={hint ? hintId : undefined}
          onChange={(e) => {
            setDraft(e.target.value);
            setHint(null);
          }}
          onKeyDown={onKeyDown}
          className="min-w-0 flex-1 bg-transparent text-sm outline-none"
        />
        <button
          type="button"
          aria-label="Save title"
          // Keeps the focus in the box (Safari and Firefox on macOS give a clicked button none,
          // and the box's blur would save before Cancel's click).
          onMouseDown={(event) => event.preventDefault()}
          onClick={() => save()}
          className="p-1 text-zinc-500 hover:text-ink"
        >
          <Check size={14} />
        </button>
        <button
          type="button"
          aria-label="Cancel rename"
          onMouseDown={(event) => event.preventDefault()}
          onClick={cancel}
          className="p-1 text-zinc-500 hover:text-ink"
        >
          <X size={14} />
        </button>
        {hint ? (
          <p id={hintId} role="alert" className="basis-full pb-0.5 text-xs text-red-700">
            {hint}
          </p>
        ) : null}
      </li>
    );
  }

  return (
    <li
      data-chat-id={chat.id}
      className={`group flex items-center rounded-lg text-sm ${active ? "bg-zinc-200/70 font-medium" : "hover:bg-zinc-100"}`}
    >
      <Link
        ref={link}
        href={`/chat/${chat.id}`}
        aria-current={active ? "page" : undefined}
        className="flex min-w-0 flex-1 items-center gap-1 px-3 py-2"
        title={chat.title}
      >
        <span dir="auto" className="min-w-0 flex-1 truncate">
          {chat.title}
        </span>
        {/* Said on its link (in the phone drawer too, which closes once the chat opens). */}
        <LinkPending label="Opening…" />
      </Link>
      <div className="hidden shrink-0 items-center pr-1 group-focus-within:flex group-hover:flex [@media(hover:none)]:flex">
        <button
          type="button"
          aria-label={`Rename ${chat.title}`}
          onClick={() => {
            // From the title as it is now: a new chat's is set by its first turn.
            setDraft(chat.title);
            setHint(null);
            closing.current = false;
            setEditing(true);
          }}
          className="rounded p-1 text-zinc-500 hover:text-ink"
        >
          <Pencil size={14} />
        </button>
        <AlertDialog.Root>
          <AlertDialog.Trigger asChild>
            <button
              type="button"
              aria-label={`Delete ${chat.title}`}
              className="rounded p-1 text-zinc-500 hover:text-red-600"
            >
              <Trash2 size={14} />
            </button>
          </AlertDialog.Trigger>
          <AlertDialog.Portal>
            <AlertDialog.Overlay className="fixed inset-0 z-[60] bg-black/30" />
            <AlertDialog.Content
              className="fixed top-1/2 left-1/2 z-[70] w-[min(90vw,24rem)] -translate-x-1/2 -translate-y-1/2 space-y-4 rounded-2xl bg-white p-6 shadow-xl"
              // Back to the chat's row: its Delete button is hidden while the row holds no focus
              // (the dialog has it), and focus handed to a hidden button fell to the page. This
              // runs a moment after the dialog goes, and a delete answered by then has handed
              // focus on to the next chat: taken back, it would fall with the deleted row.
              onCloseAutoFocus={(event) => {
                event.preventDefault();
                const focused = document.activeElement;
                if (focused && focused !== document.body) return;
                link.current?.focus();
              }}
            >
              <AlertDialog.Title className="text-base font-semibold">
                Delete this chat?
              </AlertDialog.Title>
              <AlertDialog.Description className="text-sm text-muted [overflow-wrap:anywhere]">
                “{chat.title}” and all of its messages will be deleted for good.
              </AlertDialog.Description>
              <div className="flex justify-end gap-2">
                <AlertDialog.Cancel className={buttonGhost}>Cancel</AlertDialog.Cancel>
                <AlertDialog.Action
                  onClick={onDelete}
                  className={`${buttonPrimary} bg-red-600 hover:bg-red-700`}
                >
                  Delete
                </AlertDialog.Action>
              </div>
            </AlertDialog.Content>
          </AlertDialog.Portal>
        </AlertDialog.Root>
      </div>
    </li>
  );
}
