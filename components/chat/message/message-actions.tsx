"use client";

import { RotateCcw } from "lucide-react";
import { StatsPopover } from "@/components/stats/stats-popover";
import type { MessageStats } from "@/lib/message/stats";
import { CopyButton } from "./copy-button";
import { iconButton } from "./styles";

type Props = {
  /** The message text the Copy button puts on the clipboard. */
  text: string;
  /** Called after a successful copy. */
  onCopy?: () => void;
  /** Shows the Regenerate button when given. */
  onRegenerate?: () => void;
  /** Shows the stats popover when given (it arrives with the `finish` chunk). */
  stats?: MessageStats;
  contextWindow?: number;
};

/** The toolbar under an assistant message: copy, regenerate, stats. */
export function MessageActions({ text, onCopy, onRegenerate, stats, contextWindow }: Props) {
  return (
    <div className="flex items-center gap-0.5">
      <CopyButton text={text} label="Copy message" onCopied={onCopy} />
      {onRegenerate ? (
        <button
          type="button"
          aria-label="Regenerate response"
          title="Regenerate response"
          onClick={onRegenerate}
          className={iconButton}
        >
          <RotateCcw size={14} />
        </button>
      ) : null}
      {stats ? <StatsPopover stats={stats} contextWindow={contextWindow} /> : null}
    </div>
  );
}
