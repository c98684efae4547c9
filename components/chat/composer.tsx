"use client";

import { ArrowUp, Clock, FileWarning, Square } from "lucide-react";
import {
  type FormEvent,
  type KeyboardEvent,
  type ReactNode,
  useEffect,
  useRef,
  useState,
} from "react";
import { isImeKey } from "../ui/keys";
import { Spinner } from "../ui/spinner";
import { isHoverless, useHoverless, useNarrow } from "../ui/use-hoverless";
import { takeArrivalFocus } from "./arrival-focus";
import { COMPOSER_ID } from "./skip-link";
import { useFileDrop } from "./use-file-drop";

type Props = {
  onSend: (text: string) => void;
  onStop: () => void;
  busy: boolean;
  disabled?: boolean;
  /**
   * Something the next message must follow is on its way (a version switch): said above the
   * box, which still takes text while Send waits.
   */
  held?: string | null;
  placeholder?: string;
  /** Controls under the text box: the model picker (and, later, the context ring). */
  toolbar?: ReactNode;
  maxChars: number;
  /** A limit the last send ran into (a daily quota, a rate limit), and when it lifts. */
  notice?: { message: string; resetsAt: Date | null } | null;
  /**
   * A sent message the server refused (a limit, a chat that could not be created): put back
   * in the box, unless something new was typed meanwhile, so it can be sent again. `at` tells
   * one refusal from the next of the same text.
   */
  returned?: { text: string; at: number } | null;
  /** Where an unsent draft is kept for this tab (a chat's id), so leaving and coming back keeps it. */
  draftKey?: string;
  /** Takes the keyboard's focus once it takes input, unless something else has it (the home page). */
  focusOnOpen?: boolean;
};

const DRAFT_PREFIX = "fold:draft:";

/**
 * The message box: Enter sends, Shift+Enter adds a line (on a touch screen Return adds a line
 * and the button sends), a stop button while a reply streams.
 */
export function Composer({
  onSend,
  onStop,
  busy,
  disabled,
  held,
  placeholder,
  toolbar,
  maxChars,
  notice,
  returned,
  draftKey,
  focusOnOpen,
}: Props) {
  const [text, setText] = useState("");
  const area = useRef<HTMLTextAreaElement>(null);
  const touch = useHoverless();
  // The keys' hint does not fit one line of a narrow box (and a touch keyboard has no Shift).
  const narrow = useNarrow();
  const shortHint = touch || narrow;

  // The draft outlives the page for this tab (session storage; the server never sees it).
  // Restored once, when the box appears; kept as it changes, dropped once sent.
  useEffect(() => {
    const saved = draftKey ? sessionStorage.getItem(`${DRAFT_PREFIX}${draftKey}`) : null;
    if (saved) setText(saved);
  }, [draftKey]);
  useEffect(() => {
    if (!draftKey) return;
    const key = `${DRAFT_PREFIX}${draftKey}`;
    if (text.trim()) sessionStorage.setItem(key, text);
    else sessionStorage.removeItem(key);
  }, [draftKey, text]);

  // A chat just asked for by a button (arrival-focus.ts): typing goes here, once the box takes
  // input (it waits for the chat's models).
  const arrived = useRef<boolean | null>(null);
  arrived.current ??= takeArrivalFocus();
  const opened = useRef(focusOnOpen === true);
  useEffect(() => {
    if (disabled || isHoverless()) return;
    if (arrived.current) area.current?.focus();
    else if (opened.current && document.activeElement === document.body) area.current?.focus();
    arrived.current = false;
    opened.current = false;
  }, [disabled]);
  useEffect(() => {
    if (!returned) return;
    setText((current) => (current.trim() ? current : returned.text));
    area.current?.focus();
  }, [returned]);
  const form = useRef<HTMLFormElement>(null);
  const drop = useFileDrop({ form, area, text, setText, maxChars, disabled });

  const tooLong = text.length > maxChars;
  const canSend = !busy && !disabled && !held && text.trim().length > 0 && !tooLong;

  // Grow with the text up to a limit.
  // biome-ignore lint/correctness/useExhaustiveDependencies: re-measure whenever the text changes
  useEffect(() => {
    const el = area.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, 240)}px`;
  }, [text]);

  // Send and Stop take each other's place (React keeps the one button element): focus on it
  // would stay on the other, and a second Enter meant for Send would stop the reply it sent.
  // Focus goes to the message box instead, where the next message is typed.
  const swapped = useRef(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: busy is when the buttons swap
  useEffect(() => {
    if (!swapped.current) return;
    swapped.current = false;
    if (touch) return;
    const focused = document.activeElement;
    if (!focused || focused === document.body) area.current?.focus();
  }, [busy]);

  function submit(event?: FormEvent) {
    event?.preventDefault();
    if (!canSend) return;
    onSend(text.trim());
    setText("");
    drop.clearProblem();
    // Not on a touch screen: its keyboard would open over the reply.
    if (!touch) area.current?.focus();
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    // A touch keyboard's Return starts a new line (it has no Shift+Enter); the button sends.
    if (touch) return;
    if (event.key === "Enter" && !event.shiftKey && !isImeKey(event)) {
      event.preventDefault();
      submit();
    }
  }

  return (
    <form
      ref={form}
      onSubmit={submit}
      {...drop.handlers}
      className="border-t border-line bg-white px-4 py-3"
    >
      {/* A live region that is there before its text, so a screen reader reads a limit when it
          comes (one mounted with its text already in may go unsaid). */}
      <div role="status">
        {notice ? (
          <div
            data-testid="limit-notice"
            className="mx-auto mb-2 flex max-w-3xl items-start gap-2 rounded-xl border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900"
          >
            <Clock size={16} className="mt-0.5 shrink-0" />
            <p>
              {notice.message}
              {notice.resetsAt ? (
                <span className="text-amber-700">
                  {" "}
                  (
                  {notice.resetsAt.toLocaleString(undefined, {
                    weekday: "short",
                    hour: "numeric",
                    minute: "2-digit",
                  })}{" "}
                  your time)
                </span>
              ) : null}
            </p>
          </div>
        ) : null}
        {drop.problem ? (
          <div
            data-testid="drop-problem"
            className="mx-auto mb-2 flex max-w-3xl items-start gap-2 rounded-xl border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900"
          >
            <FileWarning size={16} className="mt-0.5 shrink-0" />
            <p>{drop.problem}</p>
          </div>
        ) : null}
      </div>
      <div
        className={`relative mx-auto max-w-3xl rounded-2xl border bg-panel px-3 pt-2 pb-2 focus-within:border-zinc-500 ${drop.dragging ? "border-dashed border-zinc-500" : "border-line"}`}
      >
        {/* On the box's top edge: it takes no room (nothing moves) and covers neither the chat
            nor its scroll button; in a live region that is there before its text, so a screen
            reader reads the text when it comes. */}
        <div
          role="status"
          className="pointer-events-none absolute top-0 left-3 flex max-w-[calc(100%-1.5rem)] -translate-y-1/2"
        >
          {held ? (
            <p className="flex min-w-0 animate-appear-late items-center gap-1.5 rounded-full border border-line bg-white px-2.5 py-0.5 text-xs text-muted">
              <Spinner size={12} />
              <span className="truncate">{held}</span>
            </p>
          ) : null}
        </div>
        <textarea
          ref={area}
          id={COMPOSER_ID}
          aria-label="Message"
          dir="auto"
          rows={1}
          value={text}
          disabled={disabled}
          placeholder={
            placeholder ??
            (shortHint
              ? "Message Fold…"
              : "Message Fold… (Enter to send, Shift+Enter for a new line)")
          }
          onChange={(e) => {
            setText(e.target.value);
            drop.clearProblem();
          }}
          onKeyDown={onKeyDown}
          className="max-h-60 min-h-9 w-full resize-none bg-transparent py-1.5 text-sm outline-none disabled:cursor-not-allowed"
        />
        <div className="flex items-center justify-between gap-2">
          <div className="flex min-w-0 items-center gap-2">{toolbar}</div>
          <div className="flex shrink-0 items-center gap-2">
            {tooLong ? (
              <span className="text-xs text-red-600">
                {text.length.toLocaleString("en-US")} / {maxChars.toLocaleString("en-US")}{" "}
                characters
              </span>
            ) : null}
            {busy ? (
              <button
                type="button"
                onClick={(event) => {
                  // Stop takes Send's place as the message goes: the second click of a
                  // double-click on Send lands here, and must not stop the reply it sent.
                  if (event.detail > 1) return;
                  onStop();
                  if (!touch) area.current?.focus();
                }}
                onFocus={() => {
                  swapped.current = true;
                }}
                onBlur={(event) => {
                  // Moved elsewhere by the user (not lost as the button changed).
                  if (event.relatedTarget) swapped.current = false;
                }}
                aria-label="Stop"
                title="Stop"
                className="rounded-full bg-ink p-2 text-white hover:bg-zinc-700"
              >
                <Square size={14} fill="currentColor" />
              </button>
            ) : (
              <button
                type="submit"
                disabled={!canSend}
                aria-label="Send message"
                title="Send (Enter)"
                className="rounded-full bg-ink p-2 text-white hover:bg-zinc-700 disabled:opacity-30"
              >
                <ArrowUp size={16} />
              </button>
            )}
          </div>
        </div>
      </div>
    </form>
  );
}
