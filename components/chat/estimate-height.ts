import type { FoldUIMessage } from "@/lib/message/ui-message";

/*
 * A message's height before it is rendered, from its text: the virtualizer places rows by
 * these until it measures them, so a close guess keeps rows from shifting (and the browser
 * from laying the list out again) as they mount while the user scrolls. The constants are
 * the timeline's own metrics (text-sm rows, the toolbars under a message, the gap between
 * rows), measured in Chromium at the timeline's 768 px column.
 */

/** Average width of a text-sm character, in px. */
const CHAR_PX = 7.2;
/** The column's side padding and a user bubble's share of it. */
const COLUMN_PADDING_PX = 32;
const BUBBLE_SHARE = 0.85;
const BUBBLE_PADDING_PX = 32;
/** A user message: bubble padding, memory bar, row gap; plus 20 px a line. */
const USER_BASE_PX = 66;
const USER_LINE_PX = 20;
/** A reply: its toolbar (actions and memory in one row) and the row gap; plus 23 px a line (leading-relaxed). */
const REPLY_BASE_PX = 58;
const REPLY_LINE_PX = 23;
const PARAGRAPH_GAP_PX = 16;
const LIST_ITEM_EXTRA_PX = 7;
/** A code block: header, padding and margins; plus 20 px a line. */
const CODE_BLOCK_PX = 108;
const CODE_LINE_PX = 20;
/** Anything without text (a tool call, a compaction entry) before it is measured. */
const FALLBACK_PX = 120;

function wrappedLines(line: string, charsPerLine: number): number {
  return Math.max(1, Math.ceil(line.length / charsPerLine));
}

/** Height of Markdown prose and fenced code at `charsPerLine`. */
function markdownHeight(text: string, charsPerLine: number): number {
  let height = 0;
  let blocks = 0;
  const segments = text.split(/^```/m);
  segments.forEach((segment, i) => {
    if (i % 2 === 1) {
      // Inside a fence: the first line is the language tag.
      const lines = segment.replace(/\n$/, "").split("\n").length - 1;
      height += CODE_BLOCK_PX + Math.max(1, lines) * CODE_LINE_PX;
      return;
    }
    for (const paragraph of segment.split(/\n\s*\n/)) {
      const lines = paragraph.split("\n").filter((line) => line.trim() !== "");
      if (lines.length === 0) continue;
      if (blocks++ > 0) height += PARAGRAPH_GAP_PX;
      for (const line of lines) {
        const item = /^\s*([-*+]|\d+[.)])\s/.test(line);
        height +=
          wrappedLines(line, charsPerLine) * REPLY_LINE_PX + (item ? LIST_ITEM_EXTRA_PX : 0);
      }
    }
  });
  return height;
}

const estimates = new WeakMap<FoldUIMessage, { width: number; height: number }>();

/**
 * The estimated height of `message`'s row in a timeline `width` px wide; remembered per
 * message object, since the virtualizer asks again for every row whenever a page is added.
 */
export function estimateMessageHeight(message: FoldUIMessage, width: number): number {
  const known = estimates.get(message);
  if (known?.width === width) return known.height;
  const height = estimate(message, width);
  estimates.set(message, { width, height });
  return height;
}

function estimate(message: FoldUIMessage, width: number): number {
  const text = message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
  if (text.trim() === "") return FALLBACK_PX;
  const column = Math.max(200, Math.min(768, width) - COLUMN_PADDING_PX);
  if (message.role === "user") {
    const chars = Math.max(10, Math.floor((column * BUBBLE_SHARE - BUBBLE_PADDING_PX) / CHAR_PX));
    const lines = text.split("\n").reduce((sum, line) => sum + wrappedLines(line, chars), 0);
    return USER_BASE_PX + lines * USER_LINE_PX;
  }
  const chars = Math.max(10, Math.floor(column / CHAR_PX));
  return REPLY_BASE_PX + markdownHeight(text, chars);
}
