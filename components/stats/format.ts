import { formatCount } from "@/lib/count-text";
import { deriveTimings, type MessageStats } from "@/lib/message/stats";

/** A fixed locale, so the server render matches the browser and the e2e text is stable. */
const LOCALE = "en-US";
const MS_PER_SECOND = 1_000;
/** Under this many tokens per second one decimal still says something; above it, noise. */
const RATE_DECIMALS_BELOW = 10;
const NOT_AVAILABLE = "—";

const oneDecimal = new Intl.NumberFormat(LOCALE, {
  minimumFractionDigits: 1,
  maximumFractionDigits: 1,
});

/** Milliseconds under a second ("450 ms"), seconds with one decimal above ("1.2 s"). */
export function formatDuration(ms: number | null): string {
  if (ms === null) return NOT_AVAILABLE;
  const rounded = Math.round(ms);
  if (Math.abs(rounded) < MS_PER_SECOND) return `${rounded} ms`;
  return `${oneDecimal.format(ms / MS_PER_SECOND)} s`;
}

/** 42.3 → "42 tok/s"; 7.46 → "7.5 tok/s". */
export function formatRate(tokensPerSecond: number | null): string {
  if (tokensPerSecond === null) return NOT_AVAILABLE;
  // By the value as shown: 9.96 is "10 tok/s", not "10.0".
  const rate =
    Math.round(tokensPerSecond * 10) / 10 < RATE_DECIMALS_BELOW
      ? oneDecimal.format(tokensPerSecond)
      : formatCount(tokensPerSecond);
  return `${rate} tok/s`;
}

/**
 * A number with its percent sign, "12 %", joined by a space that does not break: "(13 %)" never
 * ends a line at "(13", nor "counts 4 % fewer" at "counts 4".
 */
export function percentText(value: number | string): string {
  return `${value}\u00a0%`;
}

/** Share of a whole as "12 %"; a sliver that would round to zero shows as "<1 %". */
export function formatShare(part: number, whole: number): string {
  const percent = (part / whole) * 100;
  if (percent > 0 && percent < 0.5) return percentText("<1");
  return percentText(formatCount(percent));
}

/** "12,345 / 128,000 (10 %)" when the window is known, else just the count. */
export function formatContext(contextTokens: number, contextWindow?: number): string {
  const tokens = formatCount(contextTokens);
  if (!contextWindow || contextWindow <= 0) return tokens;
  return `${tokens} / ${formatCount(contextWindow)} (${formatShare(contextTokens, contextWindow)})`;
}

/** The one-line hover summary: "1,234 in · 456 out · 0.8 s to first token · 42 tok/s". */
export function summarizeStats(stats: MessageStats): string {
  const { ttftMs, tokensPerSecond } = deriveTimings(stats);
  const parts = [`${formatCount(stats.inputTokens)} in`, `${formatCount(stats.outputTokens)} out`];
  if (ttftMs !== null) parts.push(`${formatDuration(ttftMs)} to first token`);
  if (tokensPerSecond !== null) parts.push(formatRate(tokensPerSecond));
  return parts.join(" · ");
}

export type StatsRow = { label: string; value: string };

/** Every figure the popover lists, in order; labels are stable (the e2e test reads them). */
export function statsRows(
  stats: MessageStats,
  contextWindow?: number,
  modelName: string = stats.model,
): StatsRow[] {
  const { ttftMs, totalMs, tokensPerSecond } = deriveTimings(stats);
  return [
    { label: "Model", value: modelName },
    { label: "Input tokens", value: formatCount(stats.inputTokens) },
    { label: "Output tokens", value: formatCount(stats.outputTokens) },
    { label: "Cache read tokens", value: formatCount(stats.cacheReadTokens) },
    { label: "Cache write tokens", value: formatCount(stats.cacheWriteTokens) },
    { label: "Reasoning tokens", value: formatCount(stats.reasoningTokens) },
    { label: "Context tokens", value: formatContext(stats.contextTokens, contextWindow) },
    { label: "Steps", value: formatCount(stats.steps) },
    { label: "Time to first token", value: formatDuration(ttftMs) },
    { label: "Total time", value: formatDuration(totalMs) },
    { label: "Tokens per second", value: formatRate(tokensPerSecond) },
    { label: "Finish reason", value: stats.finishReason },
  ];
}
