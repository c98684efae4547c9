/**
 * Chunking for the summarizer (DESIGN §8, "Sizing"): a span too big for one
 * call is split on message boundaries, each message sent exactly once.
 */

import { headOf } from "@/lib/message/unstorable-text";
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

/** A piece of a long message is cut to this share of a chunk: a running summary grows after it. */
const PIECE_SHARE = 0.7;
/** A block's opening and closing lines in a serialized message (serialize.ts). */
const OPEN_TAG = /^<(user|assistant|system)>$/;
const CLOSE_TAG = /^<\/(user|assistant|system)>$/;

/**
 * `items` with the one at `at` replaced by consecutive pieces of it when it is bigger than
 * `capacity` (in place; true when it did): a long message (a pasted document) is read whole,
 * a piece per chunk, instead of by its head and tail alone. Pieces end between lines where
 * they can; each keeps its block's tags and says which part of the message it is.
 */
export function splitIntoPieces(
  items: ChunkItem[],
  at: number,
  capacity: number,
  countText: (text: string) => number,
): boolean {
  const item = items[at];
  if (!item || item.tokens <= capacity) return false;
  let room = Math.floor((item.text.length / item.tokens) * capacity * PIECE_SHARE);
  for (let attempt = 0; attempt < 4 && room > 0; attempt++) {
    const texts = piecesOf(item.text, room);
    const pieces = texts.map((text, i) => {
      const marked = `[One long message, part ${i + 1} of ${texts.length}]\n${text}`;
      return { text: marked, tokens: countText(marked) };
    });
    if (pieces.length > 1 && pieces.every((piece) => piece.tokens <= capacity)) {
      items.splice(at, 1, ...pieces);
      return true;
    }
    room = Math.floor(room * 0.7);
  }
  return false;
}

/** `text` (a serialized message) in pieces of about `maxChars`, each closing and reopening its block. */
function piecesOf(text: string, maxChars: number): string[] {
  const pieces: string[] = [];
  let lines: string[] = [];
  let size = 0;
  let open: string | null = null;
  const flush = () => {
    if (lines.length === 0 || lines.every((line) => OPEN_TAG.test(line))) return;
    const closing = open ? [`</${open}>`] : [];
    pieces.push([...lines, ...closing].join("\n"));
    lines = open ? [`<${open}>`] : [];
    size = open ? open.length + 2 : 0;
  };
  const add = (line: string) => {
    if (size + line.length + 1 > maxChars && lines.length > 0) flush();
    lines.push(line);
    size += line.length + 1;
  };
  for (const line of text.split("\n")) {
    const opening = OPEN_TAG.exec(line);
    const closing = CLOSE_TAG.exec(line);
    if (opening) {
      add(line);
      open = opening[1] ?? null;
    } else if (closing) {
      lines.push(line);
      size += line.length + 1;
      open = null;
    } else {
      // A line longer than a piece (a document without line breaks) goes in slices.
      // Each slice between whole characters (one at least, however small the piece).
      let from = 0;
      do {
        const slice =
          headOf(line.slice(from, from + maxChars + 1), maxChars) || line.slice(from, from + 2);
        add(slice);
        from += slice.length;
      } while (from < line.length);
    }
  }
  if (lines.length > 0 && !lines.every((line) => OPEN_TAG.test(line))) {
    pieces.push(lines.join("\n"));
  }
  return pieces;
}

/**
 * The next chunk from `start`: whole messages while they fit. A message bigger
 * than a whole chunk goes alone, its text cut head + tail to fit (its tool
 * outputs are already pruned by serialization); callers split it into pieces
 * first where they can (splitIntoPieces).
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
