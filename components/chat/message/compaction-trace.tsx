"use client";

import { ChevronRight, Layers } from "lucide-react";
import { useEffect, useState } from "react";
import type { TraceInput, TraceOutput } from "@/lib/compaction/trace";
import { isTruncationNotice, traceTitle } from "@/lib/compaction/trace-text";
import { countOf, formatCount } from "@/lib/count-text";
import { formatDuration, percentText } from "../../stats/format";
import { useModelLabel } from "../../stats/model-labels";
import { Markdown } from "./markdown";

/** Outcomes whose detail (the cause, in a few words) waits behind a toggle. */
const TROUBLE: ReadonlySet<TraceOutput["outcome"]> = new Set(["fallback", "failed", "trimmed"]);

const REASON_TEXT: Record<string, string> = {
  threshold: "the chat was getting close to what the model can read at once",
  manual: "you asked",
  overflow: "the model said the chat was too long",
  length: "the reply was cut short because the model ran out of room",
  invalidated: "an edit changed messages that were already summarized",
  truncated: "the server dropped the start of the conversation without saying so",
  edited: "you changed the summary or your notes in the memory panel",
};

/** A share as the headline shows it: whole percents, and a tenth below ten ("3.2", "56"). */
function shownPct(pct: number): number {
  const size = Math.abs(pct);
  return size >= 10 ? Math.round(size) : size;
}

/** The `compact_context` entry in the timeline: running, then what it did. */
export function CompactionTrace({
  input,
  output,
}: {
  input?: Partial<TraceInput>;
  output?: TraceOutput;
}) {
  const [open, setOpen] = useState(false);
  const writer = useModelLabel(output?.summarizerModel ?? "");
  if (!output) return <RunningTrace messages={input?.messages} />;

  // The detection itself; the compaction it causes next turn shows as a compaction.
  const truncated = isTruncationNotice(output);
  const edited = output.reason === "edited";
  const trouble = TROUBLE.has(output.outcome) || truncated;
  const tone = trouble ? "border-amber-200 bg-amber-50" : "border-indigo-100 bg-indigo-50/60";
  const shrank =
    !edited &&
    (output.outcome === "summarized" ||
      output.outcome === "fallback" ||
      output.outcome === "trimmed");
  return (
    <div
      className={`rounded-xl border px-3 py-2 text-xs ${tone}`}
      data-testid="compaction-trace"
      data-state="done"
      data-outcome={output.outcome}
    >
      <button
        type="button"
        aria-expanded={open}
        onClick={() => setOpen((v) => !v)}
        className="flex w-full items-center gap-2 text-left"
      >
        <Layers size={14} className="shrink-0 text-indigo-500" />
        <span className="font-medium">{traceTitle(output)}</span>
        {shrank ? (
          <span className="text-muted">
            {output.messagesSummarized > 0 ? `${messagesText(output.messagesSummarized)} · ` : ""}
            {formatCount(output.tokensBefore)} → {formatCount(output.tokensAfter)} tokens (
            {/* A summary can outgrow the little it folded (a long one kept, a short turn). */}
            {output.savedPct < 0 ? "+" : "−"}
            {percentText(shownPct(output.savedPct))})
          </span>
        ) : null}
        <ChevronRight
          size={14}
          className={`ml-auto shrink-0 transition ${open ? "rotate-90" : ""}`}
        />
      </button>
      {open ? (
        <div className="mt-2 space-y-2 border-t border-indigo-100 pt-2">
          <p className="text-muted">Why: {REASON_TEXT[output.reason] ?? output.reason}.</p>
          {shrank ? (
            <p className="text-muted">
              Took {formatDuration(output.durationMs)}
              {output.summarizerModel ? `, written by ${writer}` : ""}. Every message stays in the
              chat; the model reads the summary instead of the older ones.
            </p>
          ) : null}
          {output.note ? (
            trouble ? (
              <details className="text-muted" data-testid="compaction-details">
                <summary className="cursor-pointer select-none">Details</summary>
                <p className="mt-1">{output.note}</p>
              </details>
            ) : (
              <p className="text-muted">{output.note}</p>
            )
          ) : null}
          {output.summary ? (
            <div
              className="fold-summary max-h-96 overflow-auto rounded-lg bg-white p-3"
              data-testid="compaction-summary"
            >
              <Markdown text={output.summary} streaming={false} />
            </div>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

/** A compaction still running: what it folds, when known, and for how long it has run. */
export function RunningTrace({ messages }: { messages?: number }) {
  const [seconds, setSeconds] = useState(0);
  useEffect(() => {
    const started = Date.now();
    const timer = setInterval(() => setSeconds(Math.floor((Date.now() - started) / 1000)), 250);
    return () => clearInterval(timer);
  }, []);
  return (
    <div
      className="flex items-center gap-2 rounded-xl border border-indigo-100 bg-indigo-50/60 px-3 py-2 text-xs"
      data-testid="compaction-trace"
      data-state="running"
      aria-live="polite"
    >
      <span className="size-3 animate-spin rounded-full motion-reduce:animate-none border-2 border-indigo-300 border-t-indigo-600" />
      <span className="font-medium">Compacting context…</span>
      <span className="text-muted">
        {messages ? `${messagesText(messages)} · ` : ""}
        {/* Not read out: a live region would say every second's tick. */}
        <span aria-hidden="true">{seconds} s</span>
      </span>
    </div>
  );
}

/** "1 message", "12 messages". */
function messagesText(count: number): string {
  return countOf(count, "message");
}
