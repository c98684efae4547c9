"use client";

import { Plus, X } from "lucide-react";
import { useRef, useState } from "react";
import type { ChatMemory } from "@/lib/chat/memory";
import { noteText } from "@/lib/compaction/user-notes";
import { countOf } from "@/lib/count-text";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { apiFetch } from "../outage/api-fetch";
import { buttonGhost, inputBase } from "../ui/styles";
import { errorOf, JSON_HEADERS } from "./use-chat-memory";
import { useFocusAfter } from "./use-focus-after";

/** As the notes route takes them (app/api/chats/[id]/memory/notes). */
const NOTE_MAX_CHARS = 500;

type Props = {
  chatId: string;
  memory: ChatMemory;
  /** A turn or compaction is running: the summary may be about to change. */
  busy: boolean;
  onSaved: (memory: ChatMemory, entry: FoldUIMessage) => void;
  /** The summary changed on the server since it was read: read it again. */
  onStale: () => void;
};

/**
 * "Notes the model keeps": lines of the summary's "Notes you added" section, which every
 * compaction carries word for word. The user adds one (Enter in the box) or takes one away.
 */
export function MemoryNotes({ chatId, memory, busy, onSaved, onStale }: Props) {
  const [draft, setDraft] = useState("");
  const [working, setWorking] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  // Where focus goes once a change is done: a note's remove button (by its line), or the box.
  const { next: focusAfter, register } = useFocusAfter(working, input);

  async function change(note: string, method: "POST" | "DELETE"): Promise<boolean> {
    setWorking(true);
    try {
      const response = await apiFetch(`/api/chats/${chatId}/memory/notes`, {
        method,
        headers: JSON_HEADERS,
        body: JSON.stringify({ note, version: memory.version, from: memory.summary ?? "" }),
      });
      if (!response.ok) {
        const error = await errorOf(response);
        if (error?.code === "conflict:summary") {
          setProblem("The summary changed meanwhile (a compaction ran). Try again.");
          onStale();
        } else {
          setProblem(error?.message ?? "The note could not be saved.");
        }
        return false;
      }
      const saved = (await response.json()) as { memory: ChatMemory; message: FoldUIMessage };
      setProblem(null);
      onSaved(saved.memory, saved.message);
      return true;
    } catch {
      setProblem("The note could not be saved. Check your connection and try again.");
      return false;
    } finally {
      setWorking(false);
    }
  }

  async function add() {
    const note = draft.trim();
    if (!note) return;
    focusAfter.current = "";
    // What was typed while it saved stays.
    if (await change(note, "POST")) setDraft((typed) => (typed.trim() === note ? "" : typed));
  }

  async function remove(line: string, at: number) {
    // The row goes away with its button: focus moves to the next note's, else to the box.
    focusAfter.current = memory.notes[at + 1] ?? memory.notes[at - 1] ?? "";
    // Not removed: the button is still there, and keeps the focus.
    // The line as the memory lists it: the server takes its bullet off as it lists it.
    if (!(await change(line, "DELETE"))) focusAfter.current = line;
  }

  const disabled = working || busy;
  // A note's lines may repeat (a code block's fences): the how-manieth of its text tells them apart.
  const seen = new Map<string, number>();
  const noteKeys = memory.notes.map((line) => {
    const count = (seen.get(line) ?? 0) + 1;
    seen.set(line, count);
    return `${line}#${count}`;
  });
  return (
    <section aria-label="Notes the model keeps" className="space-y-2">
      <h3 className="text-sm font-semibold">Notes the model keeps</h3>
      <p className="text-xs text-muted">
        Sent word for word with every request, however much of the chat is summarized.
      </p>
      <NotesRoomLine room={memory.notesRoom} />
      {memory.notes.length > 0 ? (
        <ul className="space-y-1 text-xs" data-testid="memory-notes">
          {memory.notes.map((line, at) => (
            <li
              key={noteKeys[at]}
              className="flex items-start gap-3 rounded-lg border border-line px-3 py-2"
            >
              <p dir="auto" className="min-w-0 flex-1 break-words">
                {noteText(line)}
              </p>
              <button
                ref={register(line)}
                type="button"
                disabled={disabled}
                aria-label={`Remove note: ${noteText(line).slice(0, 60)}`}
                onClick={() => void remove(line, at)}
                className="shrink-0 rounded p-0.5 text-muted hover:text-ink disabled:opacity-50"
              >
                <X size={14} />
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <form
        className="flex gap-2"
        onSubmit={(event) => {
          event.preventDefault();
          void add();
        }}
      >
        <input
          ref={input}
          value={draft}
          maxLength={NOTE_MAX_CHARS}
          onChange={(event) => setDraft(event.target.value)}
          aria-label="New note"
          dir="auto"
          placeholder="Add a note, e.g. Always answer in French"
          className={`${inputBase} text-xs`}
        />
        <button type="submit" disabled={disabled || !draft.trim()} className={buttonGhost}>
          <Plus size={14} /> Add
        </button>
      </form>
      {busy ? (
        <p className="text-xs text-muted">Notes can change once the reply has finished.</p>
      ) : null}
      {problem ? (
        <p role="alert" className="rounded-lg bg-red-50 px-3 py-2 text-xs text-red-700">
          {problem}
        </p>
      ) : null}
    </section>
  );
}

const tokens = (count: number) => countOf(count, "token");

/**
 * How much room the notes have: a fold keeps them word for word up to a share of the chat
 * model's summary. Past it (the chat moved to a smaller model), the next fold condenses the
 * oldest, and the user is told so before it happens.
 */
function NotesRoomLine({ room }: { room: ChatMemory["notesRoom"] }) {
  if (!room) return null;
  if (room.used > room.capacity) {
    return (
      <p
        data-testid="notes-room"
        className="rounded-lg border border-amber-200 bg-amber-50 px-3 py-2 text-xs text-amber-900"
      >
        These notes take {tokens(room.used)}, more than this chat's model keeps word for word (
        {tokens(room.capacity)}). The next summary condenses the oldest into it: take some away to
        keep them exact.
      </p>
    );
  }
  return (
    <p data-testid="notes-room" className="text-xs tabular-nums text-muted">
      {room.used > 0
        ? `${tokens(room.used)} of about ${tokens(room.capacity)} used with this chat's model.`
        : `Room for about ${tokens(room.capacity)} with this chat's model.`}
    </p>
  );
}
