/**
 * Streaming repair for assistant markdown: while a reply streams, its text ends
 * mid-construct. Closing or dropping the unfinished construct keeps the render
 * from flickering between literal syntax and formatting on every chunk.
 * Only the tail moves while streaming, so only the last line (or an open code
 * fence) is touched; everything before it renders exactly as written.
 */

const FENCE_LINE = /^([ \t]*)(`{3,}|~{3,})(.*)$/;
/** `[text`, `[text]`, `[text](partial-url` or the image form, at the very end. */
const PARTIAL_LINK = /(!?)\[([^[\]]*)(\]\([^)]*|\])?$/;
const LIST_MARKER = /^\s*(?:[-*+]|\d+[.)])\s+$/;
const TASK_BOX = /^[ xX]?$/;
const DANGLING_MARKERS = /[*`]+$/;

export function repairPartialMarkdown(text: string): string {
  const lines = text.split("\n");
  const fence = findOpenFence(lines);
  if (fence !== null) return closeFence(lines, fence);
  const last = lines.pop() ?? "";
  lines.push(repairLastLine(last));
  return lines.join("\n");
}

type OpenFence = { indent: string; marker: string };

/** The fence still open at the end of the text, if any (CommonMark closing rules). */
function findOpenFence(lines: string[]): OpenFence | null {
  let open: OpenFence | null = null;
  for (const line of lines) {
    const match = FENCE_LINE.exec(line);
    if (!match) continue;
    const [, indent = "", marker = "", rest = ""] = match;
    if (open === null) {
      // A backtick fence's info string cannot contain backticks; such a line is inline code.
      if (marker.startsWith("`") && rest.includes("`")) continue;
      open = { indent, marker };
    } else if (
      marker[0] === open.marker[0] &&
      marker.length >= open.marker.length &&
      rest.trim() === ""
    ) {
      open = null;
    }
  }
  return open;
}

/** Close the fence with the opener's indent, so a fence inside a list item stays inside it. */
function closeFence(lines: string[], fence: OpenFence): string {
  const last = lines[lines.length - 1] ?? "";
  const fenceChar = fence.marker[0] ?? "`";
  const trimmed = last.trim();
  // A closing fence that has only half arrived ("``") would show as code text; drop it.
  const partialCloser =
    lines.length > 1 &&
    trimmed.length > 0 &&
    trimmed.length < fence.marker.length &&
    [...trimmed].every((c) => c === fenceChar);
  if (partialCloser) lines[lines.length - 1] = "";
  const body = lines.join("\n");
  return `${body}${body.endsWith("\n") ? "" : "\n"}${fence.indent}${fence.marker}`;
}

function repairLastLine(line: string): string {
  if (FENCE_LINE.test(line)) return line; // a fence that just closed
  // A marker at the very end has nothing to wrap yet; if it closes a span, the span is
  // re-closed below, so "**bold**" and "**bold*" both render as bold.
  const withoutDangling = line.replace(DANGLING_MARKERS, "");
  return closeInlineSpans(unwrapPartialLink(withoutDangling));
}

/** A link whose URL is still arriving renders as its text until the `)` lands. */
function unwrapPartialLink(line: string): string {
  const code = scanCode(line);
  if (code.openAt >= 0) return line; // the tail is inline code, not a link
  const match = PARTIAL_LINK.exec(line);
  if (!match) return line;
  const [whole, bang = "", label = "", rest] = match;
  const bracketAt = match.index + bang.length;
  const before = line.slice(0, match.index);
  if (line[bracketAt - 1] === "\\" || inSpans(bracketAt, code.spans)) return line;
  if (label.startsWith("^")) return line; // footnote reference
  if (rest === undefined || rest === "]") {
    if (TASK_BOX.test(label) && LIST_MARKER.test(before)) return line; // "- [ ]" task item
  }
  return line.slice(0, line.length - whole.length) + label;
}

/** Close an unterminated inline code span, then unbalanced `*`/`**` emphasis. */
function closeInlineSpans(line: string): string {
  const code = scanCode(line);
  const proseEnd = code.openAt >= 0 ? code.openAt : line.length;
  const { bold, italic } = countEmphasis(line, code.spans, proseEnd);
  const closers = `${italic ? "*" : ""}${bold ? "**" : ""}`;
  if (code.openAt >= 0) {
    const ticks = "`".repeat(code.openLength);
    const pad = line.endsWith("`") ? " " : ""; // keep the closer a run of its own length
    return `${line}${pad}${ticks}${closers}`;
  }
  if (closers === "") return line;
  // A closer must touch the text it closes: "**bold **" would not render as bold.
  const body = line.trimEnd();
  return `${body}${closers}${line.slice(body.length)}`;
}

type CodeScan = {
  /** Closed code spans as [start, end). */
  spans: Array<[number, number]>;
  /** Where an unclosed backtick run starts, or -1; everything after it is code-to-be. */
  openAt: number;
  openLength: number;
};

function scanCode(line: string): CodeScan {
  const spans: Array<[number, number]> = [];
  let i = 0;
  while (i < line.length) {
    if (line[i] === "\\") {
      i += 2;
      continue;
    }
    if (line[i] !== "`") {
      i += 1;
      continue;
    }
    const length = runLength(line, i, "`");
    const end = findClosingRun(line, i + length, length);
    if (end < 0) return { spans, openAt: i, openLength: length };
    spans.push([i, end]);
    i = end;
  }
  return { spans, openAt: -1, openLength: 0 };
}

/** End of the first backtick run of exactly `length` at or after `from`, or -1. */
function findClosingRun(line: string, from: number, length: number): number {
  let j = line.indexOf("`", from);
  while (j >= 0) {
    const run = runLength(line, j, "`");
    if (run === length) return j + run;
    j = line.indexOf("`", j + run);
  }
  return -1;
}

function runLength(line: string, at: number, char: string): number {
  let end = at;
  while (line[end] === char) end += 1;
  return end - at;
}

function inSpans(index: number, spans: Array<[number, number]>): boolean {
  return spans.some(([start, end]) => index >= start && index < end);
}

/** Parity of `**` and `*` delimiters in prose; a run with space on both sides is literal. */
function countEmphasis(
  line: string,
  spans: Array<[number, number]>,
  proseEnd: number,
): { bold: boolean; italic: boolean } {
  let bold = 0;
  let italic = 0;
  let i = 0;
  while (i < proseEnd) {
    const span = spans.find(([start]) => start === i);
    if (span) {
      i = span[1];
      continue;
    }
    if (line[i] === "\\") {
      i += 2;
      continue;
    }
    if (line[i] !== "*") {
      i += 1;
      continue;
    }
    const length = runLength(line, i, "*");
    if (!isBlank(line[i - 1]) || !isBlank(line[i + length])) {
      bold += Math.floor(length / 2);
      italic += length % 2;
    }
    i += length;
  }
  return { bold: bold % 2 === 1, italic: italic % 2 === 1 };
}

function isBlank(char: string | undefined): boolean {
  return char === undefined || /\s/.test(char);
}
