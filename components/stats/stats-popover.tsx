"use client";

import { Gauge } from "lucide-react";
import { Popover, Tooltip } from "radix-ui";
import { Fragment, useId, useRef, useState } from "react";
import type { MessageStats } from "@/lib/message/stats";
import { iconButton } from "../chat/message/styles";
import { statsRows, summarizeStats } from "./format";
import { useModelLabel, useModelWindow } from "./model-labels";

type Props = {
  stats: MessageStats;
  /**
   * The model's context window in tokens: adds "/ window (x %)" to context tokens. By default
   * the window the turn was budgeted against, or (for replies stored before it was recorded)
   * the one the model list gives the model that answered.
   */
  contextWindow?: number;
};

/** Per-message stats (DESIGN §11): a one-line summary on hover, every figure on click. */
export function StatsPopover({ stats, contextWindow }: Props) {
  const [open, setOpen] = useState(false);
  const [hovered, setHovered] = useState(false);
  // Closing the stats gives the focus back to the button, which would open its tooltip over
  // the reply the user just went back to: that one focus does not.
  const refocused = useRef(false);
  const tooltipOpenChange = (next: boolean) => {
    if (next && refocused.current) return;
    setHovered(next);
  };
  const headingId = useId();
  const modelName = useModelLabel(stats.model);
  const modelWindow = useModelWindow(stats.model);

  return (
    <Tooltip.Provider delayDuration={300}>
      <Tooltip.Root open={hovered && !open} onOpenChange={tooltipOpenChange}>
        <Popover.Root open={open} onOpenChange={setOpen}>
          <Tooltip.Trigger asChild>
            <Popover.Trigger asChild>
              <button type="button" aria-label="Message stats" className={iconButton}>
                <Gauge size={14} />
              </button>
            </Popover.Trigger>
          </Tooltip.Trigger>
          <Tooltip.Portal>
            <Tooltip.Content
              side="top"
              sideOffset={6}
              className="z-50 rounded-md bg-ink px-2 py-1 text-xs text-white shadow"
            >
              {summarizeStats(stats)}
            </Tooltip.Content>
          </Tooltip.Portal>
          <Popover.Portal>
            <Popover.Content
              aria-labelledby={headingId}
              side="top"
              align="start"
              sideOffset={6}
              collisionPadding={8}
              onCloseAutoFocus={() => {
                refocused.current = true;
                setHovered(false);
                // The focus lands within this task; a hover or a focus after it opens the tooltip.
                setTimeout(() => {
                  refocused.current = false;
                });
              }}
              className="z-50 w-72 rounded-2xl border border-line bg-white p-4 text-xs shadow-lg"
            >
              <h2 id={headingId} className="mb-2 text-sm font-semibold">
                Stats
              </h2>
              <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1">
                {statsRows(
                  stats,
                  contextWindow ?? stats.contextWindow ?? modelWindow,
                  modelName,
                ).map(({ label, value }) => (
                  <Fragment key={label}>
                    <dt className="text-muted">{label}</dt>
                    <dd className="min-w-0 text-right font-medium break-words tabular-nums">
                      {value}
                    </dd>
                  </Fragment>
                ))}
              </dl>
            </Popover.Content>
          </Popover.Portal>
        </Popover.Root>
      </Tooltip.Root>
    </Tooltip.Provider>
  );
}
