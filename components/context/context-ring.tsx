"use client";

import { HoverCard } from "radix-ui";
import type { ChatContext } from "@/lib/chat/context";
import { formatCount } from "../stats/format";
import { ringFill, ringTone, SOURCE_LABELS } from "./ring-math";

const RADIUS = 8;
const CIRCUMFERENCE = 2 * Math.PI * RADIUS;

const TONE_CLASSES = {
  unknown: "text-zinc-300",
  neutral: "text-zinc-600",
  amber: "text-amber-500",
  red: "text-red-600",
} as const;

const SEGMENTS = [
  { key: "systemAndTools", label: "System & tools", className: "bg-zinc-400" },
  { key: "summary", label: "Summary", className: "bg-indigo-400" },
  { key: "pinned", label: "Pinned messages", className: "bg-amber-400" },
  { key: "messages", label: "Messages", className: "bg-zinc-700" },
  { key: "reservedForOutput", label: "Reserved for output", className: "bg-zinc-200" },
  { key: "free", label: "Free", className: "bg-white" },
] as const;

type Props = {
  context: ChatContext | null;
  error?: string | null;
  /** Clicking the ring compacts the chat (wired when compaction lands). */
  onClick?: () => void;
  busyLabel?: string;
};

/** How full the chat's context window is, as a ring; the hover card explains the numbers. */
export function ContextRing({ context, error, onClick, busyLabel }: Props) {
  const fill = context ? ringFill(context.projectedTokens, context.contextWindow) : 0;
  const tone = context ? ringTone(fill, context.source) : "unknown";
  const percent = Math.round(fill * 100);
  const label = context
    ? `Context: ${formatCount(context.projectedTokens)} of ${formatCount(context.contextWindow)} tokens (${percent} %)`
    : (error ?? "Context usage loading");

  return (
    <HoverCard.Root openDelay={150} closeDelay={100}>
      <HoverCard.Trigger asChild>
        <button
          type="button"
          aria-label={label}
          data-testid="context-ring"
          data-tone={tone}
          data-fill={fill.toFixed(4)}
          onClick={onClick}
          className={`inline-flex items-center gap-1 rounded-lg px-1.5 py-1 text-xs ${TONE_CLASSES[tone]} hover:bg-zinc-100`}
        >
          <svg width="20" height="20" viewBox="0 0 20 20" aria-hidden="true">
            <circle
              cx="10"
              cy="10"
              r={RADIUS}
              fill="none"
              stroke="currentColor"
              strokeOpacity="0.2"
              strokeWidth="3"
            />
            <circle
              cx="10"
              cy="10"
              r={RADIUS}
              fill="none"
              stroke="currentColor"
              strokeWidth="3"
              strokeLinecap="round"
              strokeDasharray={`${fill * CIRCUMFERENCE} ${CIRCUMFERENCE}`}
              transform="rotate(-90 10 10)"
            />
          </svg>
          <span className="tabular-nums">
            {busyLabel ?? (context && context.source !== "default" ? `${percent}%` : "")}
          </span>
        </button>
      </HoverCard.Trigger>
      <HoverCard.Portal>
        <HoverCard.Content
          side="top"
          align="start"
          sideOffset={8}
          className="z-50 w-80 space-y-3 rounded-2xl border border-line bg-white p-4 text-xs shadow-lg"
        >
          {context ? (
            <RingDetails context={context} percent={percent} />
          ) : (
            <p>{error ?? "Loading…"}</p>
          )}
        </HoverCard.Content>
      </HoverCard.Portal>
    </HoverCard.Root>
  );
}

function RingDetails({ context, percent }: { context: ChatContext; percent: number }) {
  const total = context.contextWindow;
  return (
    <div className="space-y-3" data-testid="context-details">
      <div>
        <p className="text-sm font-semibold">Context window</p>
        <p className="text-muted">
          {formatCount(context.projectedTokens)} / {formatCount(total)} tokens ({percent} %)
        </p>
      </div>
      <div className="flex h-2 overflow-hidden rounded-full border border-line" aria-hidden="true">
        {SEGMENTS.map((s) => (
          <div
            key={s.key}
            className={s.className}
            style={{ width: `${(context.breakdown[s.key] / total) * 100}%` }}
          />
        ))}
      </div>
      <dl className="grid grid-cols-[1fr_auto] gap-x-4 gap-y-1">
        {SEGMENTS.map((s) => (
          <div key={s.key} className="contents">
            <dt className="flex items-center gap-1.5 text-muted">
              <span
                className={`inline-block size-2 rounded-sm border border-line ${s.className}`}
              />
              {s.label}
            </dt>
            <dd className="text-right tabular-nums">{formatCount(context.breakdown[s.key])}</dd>
          </div>
        ))}
        <dt className="text-muted">Window source</dt>
        <dd className="text-right">{SOURCE_LABELS[context.source] ?? context.source}</dd>
        <dd className="col-span-2 text-muted" data-testid="window-label">
          {context.windowLabel}
        </dd>
        <dt className="text-muted">Compacts at</dt>
        <dd className="text-right tabular-nums">
          {context.compactionEnabled ? formatCount(context.budget.trigger) : "off"}
        </dd>
        <dt className="text-muted">Next message</dt>
        <dd className="text-right">{context.compactsNext ? "compacts first" : "sent as is"}</dd>
        <dt className="text-muted">Messages in the summary</dt>
        <dd className="text-right tabular-nums">{formatCount(context.summarizedMessages)}</dd>
      </dl>
    </div>
  );
}
