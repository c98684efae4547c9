import { formatCount } from "@/lib/count-text";
import { percentText } from "../stats/format";

/**
 * The context ring's colour is relative to where compaction fires, not to the window: a
 * chat compacts at roughly 55–70 % of its window, so fixed 70/90 % thresholds never warned.
 */

/** Amber from this share of the trigger on: the next few messages will fold older ones. */
export const AMBER_SHARE_OF_TRIGGER = 0.75;

export type RingTone = "unknown" | "neutral" | "amber" | "red";

export type RingToneInput = {
  projectedTokens: number;
  /** Where the chat compacts (the budget's trigger); with compaction off, the input budget. */
  limitTokens: number;
  /** The next message compacts first (over the trigger, or after an overflow or an edit). */
  compactsNext: boolean;
  source: string;
};

/** A `default` window is a guess, so the ring stays grey rather than alarm anyone. */
export function ringTone(input: RingToneInput): RingTone {
  if (input.source === "default") return "unknown";
  if (input.compactsNext || input.projectedTokens >= input.limitTokens) return "red";
  if (input.projectedTokens >= AMBER_SHARE_OF_TRIGGER * input.limitTokens) return "amber";
  return "neutral";
}

export function ringFill(projectedTokens: number, contextWindow: number): number {
  if (contextWindow <= 0) return 0;
  return Math.min(1, Math.max(0, projectedTokens / contextWindow));
}

export const SOURCE_LABELS: Record<string, string> = {
  override: "admin override",
  observed: "observed (the server cut a prompt)",
  provider: "provider API",
  catalog: "model catalog",
  default: "window unknown (default 8,192)",
};

export type NextFoldInput = {
  compactionEnabled: boolean;
  compactsNext: boolean;
  projectedTokens: number;
  contextWindow: number;
  /** Where this chat compacts, and whether that is past the budget's usual trigger. */
  budget: { trigger: number; triggerRaised: boolean };
};

/** The ring's line about the next summary: when it comes, and why later than usual. */
export function nextFoldText(context: NextFoldInput): string {
  if (!context.compactionEnabled) return "Automatic summarizing is off on this server.";
  if (context.compactsNext)
    return "Before your next message is sent, older messages will be summarized to make room.";
  const { trigger, triggerRaised } = context.budget;
  const percent = Math.round((trigger / context.contextWindow) * 100);
  const room = Math.max(0, trigger - context.projectedTokens);
  const when = `Older messages get summarized when this chat reaches ${formatCount(trigger)} tokens (${percentText(percent)} of the window): room for about ${formatCount(room)} more.`;
  return triggerRaised
    ? `${when} That is later than usual: pinned messages and the latest message are never summarized, and they already fill much of the window, so summarizing sooner would free little room.`
    : when;
}
