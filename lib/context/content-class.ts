/**
 * Content classes (issue 13): real tokenizers disagree with o200k by kind of
 * text — Chinese costs Qwen fewer tokens and Llama more, Qwen and Gemma split
 * numbers into single digits, JSON and code fare differently again. The
 * estimator splits its raw count by class so calibration can learn one ratio
 * per class instead of one per model.
 */

/**
 * `script` is every other writing system and emoji (Cyrillic, Arabic, Devanagari…):
 * measured against o200k, Claude's and Qwen's tokenizers spend up to 2.9× on them.
 */
/**
 * `frame` is not content but the chat template's framing around each message
 * and tool call, which differs by model family as much as any text does.
 */
export const CONTENT_CLASSES = [
  "prose",
  "code",
  "json",
  "cjk",
  "digits",
  "script",
  "indic",
  "frame",
] as const;
export type ContentClass = (typeof CONTENT_CLASSES)[number];

/** Raw (o200k) tokens per content class; their sum is the plain estimate. */
export type ClassTokens = Record<ContentClass, number>;

/** Multipliers from raw (o200k) tokens to a model's tokens, one per content class. */
export type ClassRatios = Record<ContentClass, number>;

/** A line at least this share CJK (of its non-space characters) is CJK text. */
const CJK_SHARE = 0.25;
/** …or at least this share of other scripts and emoji. */
const SCRIPT_SHARE = 0.25;
/** A line at least this share digits is digit-heavy: tables, logs, ids. */
const DIGIT_SHARE = 0.3;
/** Lines shorter than this take their neighbours' class: too little to judge. */
const MIN_JUDGED_CHARS = 4;

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff01-\uff60]/g;
const DIGIT = /[0-9]/g;
const INDIC = /[\u0900-\u0dff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]/g;
const SCRIPT =
  /[\u0370-\u03ff\u0400-\u052f\u0530-\u058f\u0590-\u08ff\u10a0-\u10ff]|[\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}]|\u200d|\ufe0f/gu;
const NON_SPACE = /\S/gu;
const FENCE = /^\s*(```|~~~)/;
const JSON_KEY = /"\s*:/;
const JSON_LINE = /^\s*([{[\]}]|"[^"]*"\s*:)/;
const CODE_LINE =
  /^\s*(import |export |from |def |class |function |const |let |var |return\b|if \(|for \(|while \(|#include|package |public |private |fn |use |\/\/|#!|@|\$ )|[;{}]\s*$|\)\s*(=>|\{|:)\s*$|^ {4,}\S|^\t+\S/;

export function emptyClassTokens(): ClassTokens {
  return { prose: 0, code: 0, json: 0, cjk: 0, digits: 0, script: 0, indic: 0, frame: 0 };
}

export function addClassTokens(into: ClassTokens, add: Readonly<ClassTokens>, times = 1): void {
  for (const c of CONTENT_CLASSES) into[c] += add[c] * times;
}

export function classTotal(tokens: Readonly<ClassTokens>): number {
  let total = 0;
  for (const c of CONTENT_CLASSES) total += tokens[c];
  return total;
}

/** The class a whole unit of this kind defaults to when its lines look like nothing special. */
export type ClassHint = "text" | "tool";

function count(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0;
}

/** The class of one line, or null when the line is too short to say. */
function lineClass(line: string, hint: ClassHint, inFence: boolean): ContentClass | null {
  const chars = count(line, NON_SPACE);
  if (chars < MIN_JUDGED_CHARS) return null;
  if (count(line, CJK) >= CJK_SHARE * chars) return "cjk";
  if (count(line, INDIC) >= SCRIPT_SHARE * chars) return "indic";
  if (count(line, SCRIPT) >= SCRIPT_SHARE * chars) return "script";
  if (count(line, DIGIT) >= DIGIT_SHARE * chars) return "digits";
  if (inFence) return "code";
  if (JSON_LINE.test(line) || (hint === "tool" && JSON_KEY.test(line))) return "json";
  if (CODE_LINE.test(line)) return "code";
  return hint === "tool" ? "json" : "prose";
}

export type ClassSegment = { contentClass: ContentClass; text: string };

/**
 * The text cut into runs of consecutive lines of one class, in order, each
 * with its line breaks. Joined back they give the text exactly. Short and
 * blank lines join the run before them (or the first run).
 */
export function classSegments(text: string, hint: ClassHint): ClassSegment[] {
  const segments: ClassSegment[] = [];
  let pending = "";
  let current: ContentClass | null = null;
  let inFence = false;
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline + 1;
    const line = text.slice(start, end);
    start = end;
    const fence = FENCE.test(line);
    const lineCls = fence ? "code" : lineClass(line, hint, inFence);
    if (fence) inFence = !inFence;
    if (lineCls === null || lineCls === current || current === null) {
      current ??= lineCls;
      pending += line;
      continue;
    }
    segments.push({ contentClass: current, text: pending });
    current = lineCls;
    pending = line;
  }
  if (pending !== "" || segments.length === 0) {
    segments.push({ contentClass: current ?? (hint === "tool" ? "json" : "prose"), text: pending });
  }
  return segments;
}
