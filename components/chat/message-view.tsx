"use client";

import { getToolName, isToolUIPart } from "ai";
import { Pencil, Play, RotateCcw } from "lucide-react";
import { type KeyboardEvent, type ReactNode, useRef } from "react";
import { type TraceInput, traceOutputSchema } from "@/lib/compaction/trace";
import { MESSAGE_MAX_CHARS } from "@/lib/message/limits";
import { answerParts } from "@/lib/message/retry-marker";
import type { StoppedFor } from "@/lib/message/stats";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { COMPACTION_TRACE_TOOL_NAME, messageText } from "@/lib/message/ui-message";
import { isImeKey } from "../ui/keys";
import { useHoverless } from "../ui/use-hoverless";
import { CompactionTrace } from "./message/compaction-trace";
import { useEditDraft } from "./message/edit-drafts";
import { FilePart } from "./message/file-part";
import { Markdown } from "./message/markdown";
import { MessageActions } from "./message/message-actions";
import { ToolCall } from "./message/tool-call";
import { toolCallState, wroteSomething } from "./message/tool-state";

type Props = {
  message: FoldUIMessage;
  streaming: boolean;
  isLastAssistant: boolean;
  busy: boolean;
  onRegenerate: () => void;
  /** Whether the edit went (one cancelled at its confirmation did not). */
  onEdit: (text: string) => Promise<boolean>;
  /** Asks the model to go on from a stopped reply. */
  onContinue?: () => void;
  /**
   * What the chat shows of this message's memory (its versions, its pin): a reply's shares the
   * row of its actions, a user message's goes under it.
   */
  memory?: ReactNode;
};

export function MessageView({
  message,
  streaming,
  isLastAssistant,
  busy,
  onRegenerate,
  onEdit,
  onContinue,
  memory,
}: Props) {
  if (message.role === "user") {
    return (
      <div className="space-y-1">
        <UserMessage message={message} busy={busy} onEdit={onEdit} />
        {memory}
      </div>
    );
  }
  const text = messageText({ parts: answerParts(message.parts) });
  const actions = !streaming && (text || message.metadata?.stats);
  const durations = message.metadata?.toolDurationsMs ?? {};
  const stopped = !streaming && message.metadata?.stopped === true;
  // The last reply, stopped: its notice's Retry asks again.
  const retryInNotice = stopped && isLastAssistant && !busy;
  return (
    <div className="group space-y-2" data-role="assistant">
      {answerParts(message.parts).map((part, index) => {
        const key = `${message.id}-${index}`;
        if (part.type === "text")
          return <Markdown key={key} text={part.text} streaming={streaming} />;
        if (part.type === "file") {
          return (
            <FilePart
              key={key}
              mediaType={part.mediaType}
              url={part.url}
              filename={part.filename}
            />
          );
        }
        if (part.type === "reasoning" && part.text.trim()) {
          return (
            <details key={key} className="text-xs text-muted">
              <summary className="cursor-pointer select-none">Reasoning</summary>
              <p dir="auto" className="mt-1 whitespace-pre-wrap">
                {part.text}
              </p>
            </details>
          );
        }
        if (isToolUIPart(part) && getToolName(part) === COMPACTION_TRACE_TOOL_NAME) {
          const output = traceOutputSchema.safeParse(
            part.state === "output-available" ? part.output : undefined,
          );
          return (
            <CompactionTrace
              key={key}
              input={part.input as Partial<TraceInput> | undefined}
              output={output.success ? output.data : undefined}
            />
          );
        }
        if (isToolUIPart(part)) {
          return (
            <ToolCall
              key={key}
              name={getToolName(part)}
              input={part.input}
              output={part.state === "output-available" ? part.output : undefined}
              errorText={part.state === "output-error" ? part.errorText : undefined}
              state={toolCallState(part.state, streaming)}
              durationMs={durations[part.toolCallId]}
            />
          );
        }
        return null;
      })}
      {stopped ? (
        <StoppedNotice
          stoppedFor={message.metadata?.stoppedFor}
          onContinue={isLastAssistant && !busy && wroteSomething(message) ? onContinue : undefined}
          onRetry={retryInNotice ? onRegenerate : undefined}
        />
      ) : null}
      {actions || memory ? (
        <div className="flex flex-wrap items-center gap-1">
          {actions ? (
            <MessageActions
              text={text}
              stats={message.metadata?.stats}
              // Any reply can be regenerated: the one it replaces stays a version away. A stopped
              // last reply offers it as its notice's Retry, not twice.
              onRegenerate={!busy && !retryInNotice ? onRegenerate : undefined}
            />
          ) : null}
          {memory}
        </div>
      ) : null}
    </div>
  );
}

/** A reply the user stopped: it says so, and offers to go on or to ask again. */
function StoppedNotice({
  stoppedFor,
  onContinue,
  onRetry,
}: {
  /** Fold stopped it between two steps, not the user: why. */
  stoppedFor?: StoppedFor;
  onContinue?: () => void;
  onRetry?: () => void;
}) {
  return (
    <div className="flex flex-wrap items-center gap-3 text-sm text-muted" data-testid="stopped">
      <span className="rounded-full border border-line px-2 py-0.5 text-xs font-medium">
        Stopped
      </span>
      {stoppedFor === "token_quota" ? (
        <span>Today's token quota ran out during this reply.</span>
      ) : stoppedFor === "quota_unchecked" ? (
        <span>Fold could not check today's token quota, so this reply stopped here.</span>
      ) : null}
      {onContinue ? (
        <button
          type="button"
          onClick={onContinue}
          className="inline-flex items-center gap-1 font-medium text-ink hover:underline"
        >
          <Play size={14} /> Continue
        </button>
      ) : null}
      {onRetry ? (
        <button
          type="button"
          onClick={onRetry}
          className="inline-flex items-center gap-1 font-medium text-ink hover:underline"
        >
          <RotateCcw size={14} /> Retry
        </button>
      ) : null}
    </div>
  );
}

function UserMessage({
  message,
  busy,
  onEdit,
}: {
  message: FoldUIMessage;
  busy: boolean;
  onEdit: (text: string) => Promise<boolean>;
}) {
  const { editing, draft, open, change, close } = useEditDraft(message.id);
  // The box takes the focus as the pencil opens it, caret at the end (not when a box left open
  // scrolls back into view), and the pencil gets it back when the box closes.
  const opening = useRef(false);
  const closing = useRef(false);
  const focusAtEnd = (box: HTMLTextAreaElement | null) => {
    if (!box || !opening.current) return;
    opening.current = false;
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  };
  const refocusPencil = (pencil: HTMLButtonElement | null) => {
    if (!pencil || !closing.current) return;
    closing.current = false;
    pencil.focus();
  };
  const closeBox = () => {
    closing.current = true;
    close();
  };
  const text = messageText({ parts: answerParts(message.parts) });
  const touch = useHoverless();

  // Longer than a message may be: said beside the box, as the message box says it, not sent.
  const tooLong = draft.trim().length > MESSAGE_MAX_CHARS;

  function save() {
    // A reply started while the editor was open: the edit waits for it, draft kept.
    if (busy || tooLong) return;
    const next = draft.trim();
    if (!next || next === text) {
      closeBox();
      return;
    }
    // Closed once it is sent: cancelled at "Edit this message?", the box stays as it was.
    void onEdit(next).then((sent) => {
      if (sent) close();
    });
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    // The IME's Enter picks a candidate; Escape closes its list. Neither is the editor's.
    if (isImeKey(event)) return;
    // As in the message box: a touch keyboard's Return adds a line, the button sends.
    if (event.key === "Enter" && !event.shiftKey && !touch) {
      event.preventDefault();
      save();
    }
    if (event.key === "Escape") closeBox();
  }

  if (editing) {
    return (
      <div className="ml-auto w-full max-w-[85%] space-y-2">
        <textarea
          aria-label="Edit message"
          dir="auto"
          value={draft}
          ref={focusAtEnd}
          // Lines as typed, and long ones as they wrap (about 60 characters a line here).
          rows={Math.min(
            8,
            draft
              .split("\n")
              .reduce((rows, line) => rows + Math.max(1, Math.ceil(line.length / 60)), 1),
          )}
          onChange={(e) => change(e.target.value)}
          onKeyDown={onKeyDown}
          className="w-full resize-none rounded-2xl border border-line bg-white px-4 py-2 text-sm outline-none focus:border-zinc-500"
        />
        <div className="flex items-center justify-end gap-2 text-xs">
          {tooLong ? (
            <span className="text-red-600">
              {draft.trim().length.toLocaleString("en-US")} /{" "}
              {MESSAGE_MAX_CHARS.toLocaleString("en-US")} characters
            </span>
          ) : null}
          {busy ? <span className="text-muted">Wait for the reply to finish</span> : null}
          <button
            type="button"
            onClick={closeBox}
            className="rounded-lg px-3 py-1.5 hover:bg-zinc-100"
          >
            Cancel
          </button>
          <button
            type="button"
            onClick={save}
            disabled={busy || tooLong}
            className="rounded-lg bg-ink px-3 py-1.5 text-white hover:bg-zinc-700 disabled:opacity-30"
          >
            Save & send
          </button>
        </div>
      </div>
    );
  }

  return (
    <div className="group flex items-start justify-end gap-1" data-role="user">
      {!busy ? (
        <button
          type="button"
          aria-label="Edit message"
          ref={refocusPencil}
          onClick={() => {
            opening.current = true;
            open(text);
          }}
          className="mt-2 rounded p-1 text-zinc-400 opacity-0 transition group-hover:opacity-100 hover:text-ink focus:opacity-100 [@media(hover:none)]:opacity-100"
        >
          <Pencil size={14} />
        </button>
      ) : null}
      <div
        dir="auto"
        className="max-w-[85%] min-w-0 rounded-2xl bg-zinc-100 px-4 py-2 text-sm whitespace-pre-wrap [overflow-wrap:anywhere]"
      >
        {text}
      </div>
    </div>
  );
}
