"use client";

import { Brain, Pencil, X } from "lucide-react";
import { useRouter } from "next/navigation";
import { Dialog } from "radix-ui";
import { useEffect, useRef, useState } from "react";
import type { ChatMemory } from "@/lib/chat/memory";
import { countOf } from "@/lib/count-text";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { focusMessageBoxOnArrival } from "../chat/arrival-focus";
import { Markdown } from "../chat/message/markdown";
import { apiFetch } from "../outage/api-fetch";
import { buttonGhost, buttonPrimary, inputBase } from "../ui/styles";
import { MemoryNotes } from "./memory-notes";
import { errorOf, errorText, JSON_HEADERS } from "./use-chat-memory";
import { useFocusAfter } from "./use-focus-after";

const ORIGIN_TEXT: Record<string, string> = {
  user: "you",
  assistant: "the assistant",
  "tool-args": "a tool call",
  "tool-result": "a tool result",
};

type Props = {
  chatId: string;
  /** Null until read (or when reading it failed: `readProblem`). */
  memory: ChatMemory | null;
  /** Why the last reading of the memory failed, if it did. */
  readProblem: string | null;
  onRetryRead: () => void;
  /** A turn or compaction is running: the summary may be about to change. */
  busy: boolean;
  onSaved: (memory: ChatMemory, entry: FoldUIMessage) => void;
  /** The summary changed on the server since the user began editing: read it again. */
  onStale: () => void;
  /** Unpins every pinned message (they are then folded in the next compaction); a problem, if any failed. */
  onUnpinAll: () => Promise<string | null>;
  /** Unpins one message; a problem, if it failed. */
  onUnpin: (messageId: string) => Promise<string | null>;
};

/**
 * "What the model remembers": the summary the next request carries (Markdown), its
 * reference ledger, how many messages it covers and which are pinned. The user can rewrite
 * the summary, unpin a message (or all), or continue in a new chat that starts from it.
 */
export function MemoryPanel({
  chatId,
  memory,
  readProblem,
  onRetryRead,
  busy,
  onSaved,
  onStale,
  onUnpinAll,
  onUnpin,
}: Props) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  // The text being edited and the version of the summary it started from: a compaction that
  // lands meanwhile must make the save a conflict, not be overwritten by an older text.
  const [draft, setDraft] = useState<{ text: string; version: number; from: string } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [working, setWorking] = useState(false);
  // The editor closes (Cancel, Save) with the focus in it: back to Edit summary, not the panel.
  const editButton = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(false);
  const editing = draft !== null;
  useEffect(() => {
    if (wasEditing.current && !editing) editButton.current?.focus();
    wasEditing.current = editing;
  }, [editing]);

  async function save() {
    if (!memory || draft === null) return;
    setWorking(true);
    const response = await apiFetch(`/api/chats/${chatId}/memory`, {
      method: "PUT",
      headers: JSON_HEADERS,
      body: JSON.stringify({ summary: draft.text, version: draft.version, from: draft.from }),
    });
    setWorking(false);
    if (!response.ok) {
      const error = await errorOf(response);
      if (error?.code === "conflict:summary") {
        // The draft stays for the user to copy from; the summary as it is now is read again.
        setProblem(
          "The summary changed while you edited it (a compaction ran, or another tab saved). Cancel to see it as it is now, then edit that.",
        );
        onStale();
        return;
      }
      setProblem(error?.message ?? "The summary could not be saved.");
      return;
    }
    const saved = (await response.json()) as { memory: ChatMemory; message: FoldUIMessage };
    setDraft(null);
    setProblem(null);
    onSaved(saved.memory, saved.message);
  }

  // Unpinning takes the button away with its row: focus goes to the next pin's (the one before
  // for the last), or to the line that counts them, never to the page.
  const pinCount = useRef<HTMLParagraphElement>(null);
  // Once the unpin is done and its buttons are enabled again.
  const { next: focusAfterUnpin, register: registerPin } = useFocusAfter(working, pinCount);

  function unpin(action: () => Promise<string | null>, pinId?: string) {
    const pins = memory?.pins ?? [];
    const at = pins.findIndex((pin) => pin.id === pinId);
    focusAfterUnpin.current = (pins[at + 1] ?? pins[at - 1])?.id ?? "";
    setWorking(true);
    void action()
      .then((failed) => {
        // Not unpinned: the button is still there, and keeps the focus.
        if (failed) focusAfterUnpin.current = null;
        setProblem(failed);
      })
      .finally(() => setWorking(false));
  }

  async function continueInNewChat() {
    setWorking(true);
    const response = await apiFetch(`/api/chats/${chatId}/continue`, {
      method: "POST",
      headers: JSON_HEADERS,
      body: "{}",
    });
    setWorking(false);
    if (!response.ok) {
      setProblem(await errorText(response, "A new chat could not be started."));
      return;
    }
    const { chat } = (await response.json()) as { chat: { id: string } };
    setOpen(false);
    focusMessageBoxOnArrival();
    router.push(`/chat/${chat.id}`);
    router.refresh();
  }

  const summary = memory?.summary ?? null;
  // A summary of the user's notes alone summarizes nothing of the chat.
  const summarized = Boolean(memory?.narrative || memory?.ledger.length);
  return (
    <Dialog.Root
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        // An edit of the summary stays through closing (Escape, a click outside): only Cancel
        // or Save ends it. Saved later, a summary changed meanwhile is refused, draft kept.
        if (!next) setProblem(null);
      }}
    >
      <Dialog.Trigger className="inline-flex items-center gap-1 rounded-lg px-2 py-1 text-xs text-muted hover:bg-zinc-100 hover:text-ink">
        <Brain size={14} /> Memory
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-[60] bg-black/20" />
        <Dialog.Content className="fixed top-0 right-0 z-[70] flex h-full w-[min(100vw,32rem)] flex-col gap-4 overflow-y-auto bg-white p-6 shadow-xl">
          <div className="flex items-start justify-between gap-2">
            <div>
              <Dialog.Title className="text-base font-semibold">
                What the model remembers
              </Dialog.Title>
              <Dialog.Description className="text-sm text-muted">
                {summarized
                  ? "Older messages reach the model as this summary. Pinned messages are always sent as written."
                  : memory
                    ? "Nothing is summarized yet: the model sees every message as written."
                    : readProblem
                      ? "Fold could not read what the model remembers of this chat."
                      : "Reading what the model remembers…"}
              </Dialog.Description>
            </div>
            <Dialog.Close aria-label="Close" className={buttonGhost}>
              <X size={16} />
            </Dialog.Close>
          </div>

          {readProblem ? (
            <div
              role="alert"
              className="flex items-center justify-between gap-3 rounded-lg bg-red-50 px-3 py-2 text-xs text-red-700"
            >
              <span>
                {memory ? "What is shown here may be out of date. " : null}
                {readProblem}
              </span>
              <button type="button" onClick={onRetryRead} className="shrink-0 font-medium">
                Retry
              </button>
            </div>
          ) : null}

          {summary && draft === null ? (
            <section aria-label="Summary" className="space-y-2">
              <div className="flex items-center justify-between">
                <h3 className="text-sm font-semibold">Summary</h3>
                <button
                  ref={editButton}
                  type="button"
                  disabled={busy}
                  onClick={() =>
                    memory && setDraft({ text: summary, version: memory.version, from: summary })
                  }
                  className={buttonGhost}
                >
                  <Pencil size={14} /> Edit summary
                </button>
              </div>
              <div
                // The summary's section headings at the panel's own scale (fold-summary,
                // globals.css): as a reply's headings, they stood larger than the panel's title.
                className="fold-summary rounded-xl border border-line p-3 text-sm"
                data-testid="memory-summary"
              >
                {summarized || !memory?.notes.length ? (
                  <Markdown text={memory?.narrative || summary} streaming={false} />
                ) : (
                  <p className="text-muted">Only your notes (below) so far.</p>
                )}
              </div>
            </section>
          ) : null}

          {draft !== null ? (
            <section className="space-y-2">
              <label htmlFor="summary-draft" className="text-sm font-semibold">
                Edit summary
              </label>
              <textarea
                id="summary-draft"
                dir="auto"
                value={draft.text}
                rows={16}
                // Where the work is: opened, or the panel opened again on it.
                // biome-ignore lint/a11y/noAutofocus: the user just asked to edit this text
                autoFocus
                onChange={(e) => setDraft({ ...draft, text: e.target.value })}
                className={`${inputBase} font-mono text-xs`}
              />
              <p className="text-xs text-muted">
                The next message sends this text in place of the older turns.
              </p>
              <div className="flex justify-end gap-2">
                <button
                  type="button"
                  onClick={() => {
                    setDraft(null);
                    setProblem(null);
                  }}
                  className={buttonGhost}
                >
                  Cancel
                </button>
                <button
                  type="button"
                  disabled={working || busy || !draft.text.trim()}
                  onClick={() => void save()}
                  className={buttonPrimary}
                >
                  Save summary
                </button>
              </div>
            </section>
          ) : null}

          {memory && draft === null ? (
            <MemoryNotes
              chatId={chatId}
              memory={memory}
              busy={busy}
              onSaved={onSaved}
              onStale={onStale}
            />
          ) : null}

          {memory && memory.ledger.length > 0 && draft === null ? (
            <section aria-label="Exact references" className="space-y-2">
              <h3 className="text-sm font-semibold">Exact references</h3>
              <p className="text-xs text-muted">
                Values Fold keeps character for character, whatever the summary says.
              </p>
              <ul className="space-y-1 text-xs">
                {memory.ledger.map((entry) => (
                  <li key={`${entry.origin}-${entry.value}`} className="flex justify-between gap-3">
                    <code className="break-all">{entry.value}</code>
                    <span className="shrink-0 text-muted">
                      from {ORIGIN_TEXT[entry.origin] ?? entry.origin} ·{" "}
                      {entry.mentions === 1
                        ? "mentioned once"
                        : `mentioned ${entry.mentions.toLocaleString("en-US")} times`}
                    </span>
                  </li>
                ))}
              </ul>
            </section>
          ) : null}

          {memory ? (
            <section aria-label="Pinned messages" className="space-y-2">
              <div className="flex items-center gap-3 text-xs text-muted">
                <p ref={pinCount} tabIndex={-1} className="flex-1 outline-none">
                  {memory.pins.length === 0
                    ? "No pinned messages. Pin one from its toolbar to keep it out of the summary."
                    : `${countOf(memory.pins.length, "pinned message")}, always sent as written.`}
                </p>
                {memory.pins.length > 1 ? (
                  <button
                    type="button"
                    disabled={working || busy}
                    onClick={() => unpin(onUnpinAll)}
                    className="font-medium text-ink hover:underline disabled:opacity-50"
                  >
                    Unpin all
                  </button>
                ) : null}
              </div>
              {memory.pins.length > 0 ? (
                <ul className="space-y-1 text-xs" data-testid="memory-pins">
                  {memory.pins.map((pin) => (
                    <li
                      key={pin.id}
                      className="flex items-start gap-3 rounded-lg border border-line px-3 py-2"
                    >
                      <p className="min-w-0 flex-1 break-words">
                        <span className="font-medium">
                          {pin.role === "user" ? "You" : "Assistant"}:
                        </span>{" "}
                        {pin.excerpt || <span className="text-muted">(no text)</span>}
                      </p>
                      <button
                        ref={registerPin(pin.id)}
                        type="button"
                        disabled={working || busy}
                        aria-label={`Unpin ${pin.role === "user" ? "your" : "the assistant's"} message${pin.excerpt ? `: ${pin.excerpt.slice(0, 40)}` : ""}`}
                        onClick={() => unpin(() => onUnpin(pin.id), pin.id)}
                        className="shrink-0 font-medium text-ink hover:underline disabled:opacity-50"
                      >
                        Unpin
                      </button>
                    </li>
                  ))}
                </ul>
              ) : null}
            </section>
          ) : null}

          {problem ? (
            <p role="alert" className="rounded-lg bg-red-50 px-3 py-2 text-xs text-red-700">
              {problem}
            </p>
          ) : null}

          <div className="mt-auto border-t border-line pt-4">
            <button
              type="button"
              disabled={!summarized || working || busy}
              onClick={() => void continueInNewChat()}
              className={buttonGhost}
            >
              Continue in a new chat
            </button>
            <p className="text-xs text-muted">
              {summarized
                ? "Starts a new chat that begins with this summary and its references; the pinned messages and the latest ones, which the summary does not hold, come along."
                : memory
                  ? "Available once older messages have been summarized."
                  : "Available once what the model remembers has been read."}
            </p>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
