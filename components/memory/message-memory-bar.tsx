"use client";

import { ChevronLeft, ChevronRight, Pin, PinOff } from "lucide-react";
import type { BranchSwitch } from "@/lib/chat/branches";

type Props = {
  role: "system" | "user" | "assistant";
  /** The summary covers it: the model sees it through the summary, not as written. */
  folded: boolean;
  pinned: boolean;
  /** The ‹ n/m › switch when this message's turn has other versions. */
  branch?: BranchSwitch;
  busy: boolean;
  onPin: (pinned: boolean) => void;
  /** `from` is the arrow pressed: the page hands the focus back to it once the version is drawn. */
  onSwitch: (position: number, from: HTMLElement) => void;
};

const chip = "rounded p-1 text-zinc-400 transition hover:text-ink disabled:opacity-40";
/**
 * The version arrows are aria-disabled, not disabled, at their ends and while busy: a disabled
 * button drops the keyboard's focus, and stepping through versions keeps it on the arrow.
 */
const arrow = `${chip} aria-disabled:cursor-default aria-disabled:opacity-40 aria-disabled:hover:text-zinc-400`;

/** Under a message: its versions, whether the summary holds it, and its pin. */
export function MessageMemoryBar({ role, folded, pinned, branch, busy, onPin, onSwitch }: Props) {
  const noPrevious = busy || !branch || branch.position <= 1;
  const noNext = busy || !branch || branch.position >= branch.count;
  return (
    <div
      className={`flex items-center gap-1 text-xs text-muted ${role === "user" ? "justify-end" : ""}`}
      data-testid="message-memory"
    >
      {branch ? (
        <span
          className="inline-flex items-center"
          role="group"
          aria-label="Versions of this message"
          data-branch={branch.messageId}
        >
          <button
            type="button"
            aria-label="Previous version"
            aria-disabled={noPrevious}
            onClick={(event) => {
              if (noPrevious) return;
              onSwitch(branch.position - 1, event.currentTarget);
            }}
            className={arrow}
          >
            <ChevronLeft size={14} />
          </button>
          <span className="tabular-nums" data-testid="branch-position">
            {branch.position}/{branch.count}
          </span>
          <button
            type="button"
            aria-label="Next version"
            aria-disabled={noNext}
            onClick={(event) => {
              if (noNext) return;
              onSwitch(branch.position + 1, event.currentTarget);
            }}
            className={arrow}
          >
            <ChevronRight size={14} />
          </button>
        </span>
      ) : null}
      {folded ? (
        <span
          className="rounded bg-indigo-50 px-1.5 py-0.5 text-indigo-700"
          title="The model sees this message through the summary"
        >
          In summary
        </span>
      ) : null}
      {pinned ? (
        <span className="rounded bg-amber-50 px-1.5 py-0.5 text-amber-800">Pinned</span>
      ) : null}
      <button
        type="button"
        aria-label={pinned ? "Unpin message" : "Pin message"}
        aria-pressed={pinned}
        title={
          pinned
            ? "Unpin: it may be folded into the summary"
            : "Pin: never fold it into the summary"
        }
        disabled={busy}
        onClick={() => onPin(!pinned)}
        className={`${chip} ${pinned ? "" : "opacity-0 group-hover/message:opacity-100 focus:opacity-100 [@media(hover:none)]:opacity-100"}`}
      >
        {pinned ? <PinOff size={14} /> : <Pin size={14} />}
      </button>
    </div>
  );
}
