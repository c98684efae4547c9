"use client";

import { HoverCard, Popover } from "radix-ui";
import { type ComponentProps, type ReactNode, useRef, useState } from "react";
import type { ChatContext } from "@/lib/chat/context";
import { formatCount } from "@/lib/count-text";
import { percentText } from "../stats/format";
import { useHoverless } from "../ui/use-hoverless";
import { nextFoldText, ringFill, ringTone, SOURCE_LABELS } from "./ring-math";

const RADIUS = 8;
const CIRCUMFERENCE = 2 * Math.PI * RADIUS;

const TONE_CLASSES = {
  unknown: "text-zinc-300",
  unavailable: "text-zinc-400",
  neutral: "text-zinc-600",
  amber: "text-amber-500",
  red: "text-red-600",
} as const;

const SEGMENTS = [
  { key: "systemAndTools", label: "Fold's instructions and tools", className: "bg-zinc-400" },
  { key: "summary", label: "Summary of older messages", className: "bg-indigo-400" },
  { key: "pinned", label: "Pinned messages", className: "bg-amber-400" },
  { key: "messages", label: "Messages", className: "bg-zinc-700" },
  { key: "reservedForOutput", label: "Kept free for the reply", className: "bg-zinc-200" },
  { key: "free", label: "Free", className: "bg-white" },
] as const;

/** Compaction off: the ring warns as the chat nears what the model can take at all. */
function toneInput(context: ChatContext) {
  return {
    projectedTokens: context.projectedTokens,
    limitTokens: context.compactionEnabled ? context.budget.trigger : context.budget.inputBudget,
    compactsNext: context.compactsNext,
    source: context.source,
  };
}

type Props = {
  context: ChatContext | null;
  error?: string | null;
  /** Clicking the ring compacts the chat (wired when compaction lands). */
  onClick?: () => void;
  busyLabel?: string;
  /**
   * A dialog covers the page (the compaction's confirm, opened from the ring): the card stays
   * shut. Its open waits 150 ms after the ring takes the focus, so it could open over a dialog
   * the ring opened at once, and take the Escape meant for that dialog.
   */
  covered?: boolean;
};

/**
 * How full the chat's context window is, as a ring; the hover card explains the numbers (on a
 * touch screen, a tap opens them).
 */
export function ContextRing({ context, error, onClick, busyLabel, covered = false }: Props) {
  const fill = context ? ringFill(context.projectedTokens, context.contextWindow) : 0;
  // No reading, and the last try failed: a broken ring, not the empty one of a reading on its way.
  const tone = context ? ringTone(toneInput(context)) : error ? "unavailable" : "unknown";
  const percent = Math.round(fill * 100);
  const visible = busyLabel ?? (context && context.source !== "default" ? `${percent}%` : "");
  // The accessible name starts with the visible text, so voice control finds the button by it.
  const label = context
    ? `${visible ? `${visible} ` : ""}context used: ${formatCount(context.projectedTokens)} of ${formatCount(context.contextWindow)} tokens`
    : (error ?? "Context usage loading");
  const hoverless = useHoverless();
  // The card opens on focus too: once the ring is clicked (to compact), it closes, so it does not
  // cover what the compaction adds to the chat while the focus stays on the ring.
  const [cardOpen, setCardOpen] = useState(false);
  // A click shuts the card until the pointer leaves or the focus goes: the open the pointer or
  // the focus scheduled (150 ms after reaching the ring) would show it again over the toast
  // that answers the click.
  const dismissed = useRef(false);

  const details = context ? (
    <RingDetails context={context} percent={percent} touch={hoverless} />
  ) : (
    <p>{error ?? "Loading…"}</p>
  );
  // On a touch screen the tap opens the details; compacting is a button inside them.
  const ring = (
    <RingButton
      label={label}
      tone={tone}
      fill={fill}
      visible={visible}
      onClick={
        hoverless || busyLabel || !onClick
          ? undefined
          : () => {
              dismissed.current = true;
              setCardOpen(false);
              onClick();
            }
      }
      onPointerLeave={() => {
        dismissed.current = false;
      }}
      onBlur={() => {
        dismissed.current = false;
      }}
    />
  );
  if (hoverless) {
    return (
      <TouchRing ring={ring} onCompact={busyLabel ? undefined : onClick}>
        {details}
      </TouchRing>
    );
  }
  return (
    <HoverCard.Root
      open={cardOpen && !covered}
      onOpenChange={(open) => setCardOpen(open && !dismissed.current)}
      openDelay={150}
      closeDelay={100}
    >
      <HoverCard.Trigger asChild>{ring}</HoverCard.Trigger>
      <HoverCard.Portal>
        <HoverCard.Content {...CARD}>{details}</HoverCard.Content>
      </HoverCard.Portal>
    </HoverCard.Root>
  );
}

/** The details card, hover card or popover alike: above the ring, clear of the screen's edges. */
const CARD = {
  side: "top",
  align: "start",
  sideOffset: 8,
  collisionPadding: 8,
  className:
    "z-50 w-80 max-w-[calc(100vw-1rem)] space-y-3 rounded-2xl border border-line bg-white p-4 text-xs shadow-lg",
} as const;

/**
 * On a touch screen a tap opens the details, and compacting is a button inside them: a tap on
 * the ring itself must not fold the chat of someone who only wanted to see how full it is.
 */
function TouchRing({
  ring,
  onCompact,
  children,
}: {
  ring: ReactNode;
  onCompact?: () => void;
  children: ReactNode;
}) {
  const [open, setOpen] = useState(false);
  return (
    <Popover.Root open={open} onOpenChange={setOpen}>
      <Popover.Trigger asChild>{ring}</Popover.Trigger>
      <Popover.Portal>
        <Popover.Content {...CARD}>
          {children}
          <button
            type="button"
            disabled={!onCompact}
            onClick={() => {
              setOpen(false);
              onCompact?.();
            }}
            className="w-full rounded-lg bg-ink px-3 py-2 text-sm font-medium text-white disabled:opacity-40"
          >
            Compact now
          </button>
        </Popover.Content>
      </Popover.Portal>
    </Popover.Root>
  );
}

/** The ring itself; a hover card's or a popover's trigger passes its own props through. */
function RingButton({
  label,
  tone,
  fill,
  visible,
  ...trigger
}: ComponentProps<"button"> & {
  label: string;
  tone: keyof typeof TONE_CLASSES;
  fill: number;
  visible: string;
}) {
  return (
    <button
      type="button"
      {...trigger}
      aria-label={label}
      data-testid="context-ring"
      data-tone={tone}
      data-fill={fill.toFixed(4)}
      className={`inline-flex items-center gap-1 rounded-lg px-1.5 py-1 text-xs ${TONE_CLASSES[tone]} hover:bg-zinc-100`}
    >
      <svg width="20" height="20" viewBox="0 0 20 20" aria-hidden="true">
        <circle
          cx="10"
          cy="10"
          r={RADIUS}
          fill="none"
          stroke="currentColor"
          strokeOpacity={tone === "unavailable" ? "0.6" : "0.2"}
          strokeWidth="3"
          strokeDasharray={tone === "unavailable" ? "2 2.7" : undefined}
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
      <span className="tabular-nums">{visible}</span>
    </button>
  );
}

function RingDetails({
  context,
  percent,
  touch,
}: {
  context: ChatContext;
  percent: number;
  touch: boolean;
}) {
  const total = context.contextWindow;
  return (
    // A labelled region: the card is portalled outside the page's landmarks.
    <section aria-label="Context details" className="space-y-3" data-testid="context-details">
      <div>
        <p className="text-sm font-semibold">How much the model can see</p>
        <p className="text-muted">
          This chat uses {formatCount(context.projectedTokens)} of {formatCount(total)} tokens (
          {percentText(percent)})
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
        <dt className="text-muted">Window size</dt>
        <dd className="text-right">{SOURCE_LABELS[context.source] ?? context.source}</dd>
        <dd className="col-span-2 text-muted" data-testid="window-label">
          {context.windowLabel}
        </dd>
      </dl>
      <p data-testid="context-next">{nextFoldText(context)}</p>
      {context.summarizedMessages > 0 ? (
        <p className="text-muted">
          {formatCount(context.summarizedMessages)} older{" "}
          {context.summarizedMessages === 1 ? "message is" : "messages are"} in the summary; all of
          them stay in the chat.
        </p>
      ) : null}
      {touch ? null : (
        <p className="text-muted">
          Click the ring to compact now: older messages go into the summary.
        </p>
      )}
    </section>
  );
}
