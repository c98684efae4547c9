"use client";

import { ChevronRight, CircleAlert, CircleCheck, CircleSlash, Wrench } from "lucide-react";
import { Collapsible } from "radix-ui";
import { type ReactNode, useMemo, useState } from "react";
import { formatDuration } from "@/components/stats/format";
import { Spinner } from "@/components/ui/spinner";
import { formatCount } from "@/lib/count-text";

/** Past this many characters a payload is cut until the reader asks for all of it. */
const PAYLOAD_PREVIEW_CHARS = 4_000;

export type ToolCallState =
  | "input-streaming"
  | "input-available"
  | "output-available"
  | "output-error"
  /** The call was refused its run (its result says so to the model). */
  | "denied"
  /** The reply ended (stopped, failed) before the call had a result: it never ran to the end. */
  | "cancelled";

type Props = {
  name: string;
  /** The arguments; partial while `input-streaming`. */
  input: unknown;
  output?: unknown;
  errorText?: string;
  state: ToolCallState;
  durationMs?: number;
};

/** One tool call in the timeline (DESIGN §11): arguments, result and duration. */
export function ToolCall({ name, input, output, errorText, state, durationMs }: Props) {
  const done = state !== "input-streaming" && state !== "input-available";
  // Open while running so the arguments can be watched; folded once done, unless the reader chose.
  const [chosen, setChosen] = useState<boolean | null>(null);
  const open = chosen ?? !done;

  return (
    <Collapsible.Root
      open={open}
      onOpenChange={setChosen}
      className="my-2 rounded-lg border border-line bg-panel text-xs"
    >
      <Collapsible.Trigger className="flex w-full items-center gap-2 rounded-lg px-3 py-2 text-left hover:bg-zinc-100">
        <ChevronRight
          size={14}
          className={`shrink-0 text-muted transition-transform ${open ? "rotate-90" : ""}`}
        />
        <Wrench size={14} className="shrink-0 text-muted" />
        <span className="min-w-0 flex-1 truncate font-mono text-ink">{name}</span>
        <Status state={state} />
        {durationMs === undefined ? null : (
          <span className="shrink-0 text-muted tabular-nums">{formatDuration(durationMs)}</span>
        )}
      </Collapsible.Trigger>
      <Collapsible.Content className="space-y-3 border-t border-line px-3 py-2">
        <Section title="Arguments">
          <Payload value={input} />
        </Section>
        {state === "output-error" ? (
          <Section title="Error">
            <p className="rounded-md bg-red-50 p-2 break-words whitespace-pre-wrap text-red-700">
              {errorText || "The tool failed without a message."}
            </p>
          </Section>
        ) : null}
        {state === "output-available" ? (
          <Section title="Result">
            <Payload value={output} />
          </Section>
        ) : null}
      </Collapsible.Content>
    </Collapsible.Root>
  );
}

function Status({ state }: { state: ToolCallState }) {
  if (state === "output-available") {
    return (
      <span className="flex shrink-0 items-center text-emerald-600">
        <CircleCheck size={14} />
        <span className="sr-only">Done</span>
      </span>
    );
  }
  if (state === "output-error") {
    return (
      <span className="flex shrink-0 items-center gap-1 text-red-600">
        <CircleAlert size={14} />
        Failed
      </span>
    );
  }
  if (state === "denied" || state === "cancelled") {
    return (
      <span className="flex shrink-0 items-center gap-1 text-muted">
        <CircleSlash size={14} />
        {state === "denied" ? "Denied" : "Cancelled"}
      </span>
    );
  }
  return (
    <span className="flex shrink-0 items-center gap-1 text-muted">
      <Spinner />
      Running…
    </span>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section>
      <h4 className="mb-1 font-medium text-muted">{title}</h4>
      {children}
    </section>
  );
}

function Payload({ value }: { value: unknown }) {
  const text = useMemo(() => payloadText(value), [value]);
  const [showAll, setShowAll] = useState(false);
  const long = text.length > PAYLOAD_PREVIEW_CHARS;
  const shown = long && !showAll ? `${text.slice(0, PAYLOAD_PREVIEW_CHARS)}…` : text;

  return (
    <div>
      <pre className="max-h-64 overflow-auto rounded-md border border-line bg-white p-2 font-mono break-words whitespace-pre-wrap">
        {shown || "—"}
      </pre>
      {long ? (
        <button
          type="button"
          onClick={() => setShowAll(!showAll)}
          className="mt-1 text-accent hover:underline"
        >
          {showAll ? "Show less" : `Show all (${formatCount(text.length)} characters)`}
        </button>
      ) : null}
    </div>
  );
}

/** Text as it came; anything else as indented JSON (values JSON cannot hold fall back to String). */
function payloadText(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}
