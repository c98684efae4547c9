/**
 * Chunking for the summarizer (DESIGN §8, "Sizing"): a span too big for one
 * call is split on message boundaries, each message sent exactly once.
 */
import { cutHeadTail } from "./serialize";

/** The "\n\n" between two messages of a chunk. */
const SEPARATOR_TOKENS = 1;

/**
 * One serialized message and its estimated tokens. A reply of several steps (a tool loop) also
 * says how to read it step by step: when it is bigger than a whole chunk, its steps are sent in
 * chunks of their own instead of its head and tail alone.
 */
export type ChunkItem = { text: string; tokens: number; steps?: () => ChunkItem[] };

/**
 * `items` with the one at `at` replaced by its steps when it is bigger than `capacity` and has
 * any (in place; true when it did).
 */
export function splitIntoSteps(items: ChunkItem[], at: number, capacity: number): boolean {
  const item = items[at];
  if (!item?.steps || item.tokens <= capacity) return false;
  const steps = item.steps();
  if (steps.length < 2) return false;
  items.splice(at, 1, ...steps);
  return true;
}

/**
 * The next chunk from `start`: whole messages while they fit. A message bigger
 * than a whole chunk goes alone, its text cut head + tail to fit (its tool
 * outputs are already pruned by serialization).
 */
export function packChunk(
  items: readonly ChunkItem[],
  start: number,
  capacity: number,
  countText: (text: string) => number,
): { text: string; end: number } {
  let end = start;
  let used = 0;
  while (end < items.length) {
    const item = items[end] as ChunkItem;
    const cost = item.tokens + (end > start ? SEPARATOR_TOKENS : 0);
    if (used + cost > capacity) break;
    used += cost;
    end += 1;
  }
  if (end > start) {
    return {
      text: items
        .slice(start, end)
        .map((item) => item.text)
        .join("\n\n"),
      end,
    };
  }
  const alone = items[start] as ChunkItem;
  return { text: fitToTokens(alone.text, capacity, countText), end: start + 1 };
}

/** `text` cut head + tail until it counts at most `maxTokens`. */
export function fitToTokens(
  text: string,
  maxTokens: number,
  countText: (text: string) => number,
): string {
  const tokens = countText(text);
  if (tokens <= maxTokens) return text;
  let chars = Math.floor((text.length * maxTokens) / tokens);
  let cut = cutHeadTail(text, chars);
  while (chars > 0 && countText(cut) > maxTokens) {
    chars = Math.floor(chars * 0.9);
    cut = cutHeadTail(text, chars);
  }
  return cut;
}
