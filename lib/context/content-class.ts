/** The writing-system classes: text that is not Latin-script prose, code, JSON or digits. */
export const SCRIPT_CLASSES = [
  "han",
  "kana",
  "hangul",
  "cyrillic",
  "greek",
  "arabic",
  "hebrew",
  "devanagari",
  "indic",
  "thai",
  "emoji",
  "script",
] as const;
export type ScriptClass = (typeof SCRIPT_CLASSES)[number];

/**
 * o200k writes a run of digits as groups of three and a last shorter group, each group one
 * token; Qwen and Gemma spend one token a digit. Counting o200k's digit tokens by group length
 * makes each family's price of a group a constant.
 */
export const DIGIT_GROUP_CLASSES = ["digits1", "digits2", "digits3"] as const;
export type DigitGroupClass = (typeof DIGIT_GROUP_CLASSES)[number];

/**
 * Content classes (issue 13): real tokenizers disagree with o200k by kind of
 * text — Chinese costs Qwen fewer tokens and Llama more, Qwen and Gemma split
 * numbers into single digits, JSON and code fare differently again, and each
 * writing system has its own price in each family (against o200k, Claude
 * spends ≈ 3× on Arabic but ≈ 1.8× on Russian; Gemma spends less on Hindi than
 * o200k, Claude ≈ 3.6× more). The estimator splits its raw count by class so
 * calibration can learn one ratio per class instead of one per model.
 *
 * Writing systems are classes of their own where the families price them
 * apart: `han` (Chinese), `kana` (Japanese: kana mixed with kanji), `hangul`,
 * `cyrillic`, `greek`, `arabic` (the Arabic script: Arabic, Persian, Urdu),
 * `hebrew`, `devanagari` (Hindi, Marathi, Nepali), `indic` (Bengali, Tamil and the other
 * Brahmic scripts of India and Sri Lanka: most families hold far fewer of their words than
 * of Hindi's, Llama 3 spends ≈ 3.5 per o200k token on them against ≈ 1.6 on Hindi), `thai`
 * (Thai, Lao, Myanmar, Khmer), `emoji`, and
 * `script` for any other (Armenian, Georgian, Ethiopic, Tibetan…).
 *
 * `call` is a tool call whole (name, arguments and framing): each family's
 * template renders calls its own way, and some leave them out of the prompt
 * (DeepSeek V3's). `frame` is not content but the chat template's framing
 * around each message and tool result, which differs by model family as much
 * as any text does. The framing a request carries once is priced apart, as its
 * count does not grow with the messages: `requestFrame` (the begin-of-text token
 * and the generation prompt: Llama 3 spends 5, Qwen 3) and `systemFrame` (around
 * the instructions: Qwen and Llama frame them as a message, Claude and DeepSeek
 * send them bare, Gemma folds them into the first user turn). Priced per message,
 * they were a few tokens off on every request, a tenth of a short chat's count.
 * Stored fits keep their ratios and covariance in this order.
 */
export const CONTENT_CLASSES = [
  "prose",
  "code",
  "json",
  ...DIGIT_GROUP_CLASSES,
  ...SCRIPT_CLASSES,
  "call",
  "frame",
  "requestFrame",
  "systemFrame",
] as const;
export type ContentClass = (typeof CONTENT_CLASSES)[number];

/**
 * A second count beside some classes' o200k tokens, where the families' price per o200k token
 * follows it (the fit weighs it beside the tokens):
 *
 * - a writing system's letters (code points of that system). o200k merges common words whole,
 *   so short everyday text packs more letters into each o200k token than long text; families
 *   that merge less spend more per o200k token on it (Claude ≈ 1.8 on short Chinese against
 *   1.35 on long). Not emoji, where one code point is a whole word.
 * - code's indentation tabs: o200k merges runs of them, Claude and Gemma spend ≈ 1.3 per o200k
 *   token on tab-indented Go or C against ≈ 1.15 on space-indented code.
 *
 * These counts are not tokens: they are never in `classTotal`, and the scalar paths (one
 * overall ratio) are unchanged.
 */
export type MeasuredClass = Exclude<ScriptClass, "emoji"> | "code";
export const MEASURED_CLASSES: readonly MeasuredClass[] = [
  ...SCRIPT_CLASSES.filter((c): c is Exclude<ScriptClass, "emoji"> => c !== "emoji"),
  "code",
];
export type UnitKey = `${Exclude<ScriptClass, "emoji">}Letters` | "codeTabs";
export const unitKey = (c: MeasuredClass): UnitKey => (c === "code" ? "codeTabs" : `${c}Letters`);
export const UNIT_KEYS: readonly UnitKey[] = MEASURED_CLASSES.map(unitKey);

/** Everything a per-class fit weighs: each class's tokens, then the second counts. */
export const FIT_MEASURES = [...CONTENT_CLASSES, ...UNIT_KEYS] as const;
export type FitMeasure = ContentClass | UnitKey;

/** Raw (o200k) tokens per content class (their sum is the plain estimate), and the second counts. */
export type ClassTokens = Record<ContentClass, number> & Partial<Record<UnitKey, number>>;

/**
 * Multipliers to a model's tokens: one per content class on its o200k tokens, and one per
 * second count (none: zero).
 */
export type ClassRatios = Record<ContentClass, number> & Partial<Record<UnitKey, number>>;

/** A line at least this share (of its non-space characters) in one non-Latin writing system is that system's. */
const SCRIPT_SHARE = 0.25;
/** A CJK line with at least this share of kana among its CJK characters is Japanese. */
const KANA_SHARE = 0.1;
/** Lines shorter than this take their neighbours' class: too little to judge. */
const MIN_JUDGED_CHARS = 4;

const FENCE = /^\s*(```|~~~)/;
const JSON_KEY = /"\s*:/;
const JSON_LINE = /^\s*([{[\]}]|"[^"]*"\s*:)/;
const CODE_LINE =
  /^\s*(import |export |from |def |class |function |const |let |var |return\b|if \(|for \(|while \(|#include|package |public |private |fn |use |\/\/|#!|@|\$ )|[;{}]\s*$|\)\s*(=>|\{|:)\s*$|^ {4,}\S|^\t+\S/;

/** Code point ranges (inclusive) of each writing system; `cjk` is CJK punctuation and full-width forms. */
export type ScriptKey = ScriptClass | "cjk";
const RANGES: readonly (readonly [number, number, ScriptKey])[] = [
  [0x0370, 0x03ff, "greek"],
  [0x0400, 0x052f, "cyrillic"],
  [0x0530, 0x058f, "script"], // Armenian
  [0x0590, 0x05ff, "hebrew"],
  [0x0600, 0x06ff, "arabic"],
  [0x0700, 0x074f, "script"], // Syriac
  [0x0750, 0x077f, "arabic"],
  [0x0780, 0x07ff, "script"], // Thaana, N'Ko
  [0x08a0, 0x08ff, "arabic"],
  [0x0900, 0x097f, "devanagari"],
  [0x0980, 0x0dff, "indic"],
  [0x0e00, 0x0eff, "thai"], // Thai, Lao
  [0x0f00, 0x0fff, "script"], // Tibetan
  [0x1000, 0x109f, "thai"], // Myanmar
  [0x10a0, 0x10ff, "script"], // Georgian
  [0x1100, 0x11ff, "hangul"],
  [0x1200, 0x13ff, "script"], // Ethiopic, Cherokee
  [0x1780, 0x17ff, "thai"], // Khmer
  [0x1800, 0x18af, "script"], // Mongolian
  [0x1c80, 0x1c8f, "cyrillic"],
  [0x1f00, 0x1fff, "greek"],
  [0x200d, 0x200d, "emoji"], // zero-width joiner inside emoji sequences
  [0x231a, 0x23ff, "emoji"],
  [0x2600, 0x27bf, "emoji"],
  [0x2b00, 0x2bff, "emoji"],
  [0x2d00, 0x2d2f, "script"], // Georgian
  [0x2de0, 0x2dff, "cyrillic"],
  [0x3000, 0x303f, "cjk"],
  [0x3040, 0x30ff, "kana"],
  [0x3130, 0x318f, "hangul"],
  [0x31f0, 0x31ff, "kana"],
  [0x3400, 0x4dbf, "han"],
  [0x4e00, 0x9fff, "han"],
  [0xa640, 0xa69f, "cyrillic"],
  [0xa960, 0xa97f, "hangul"],
  [0xac00, 0xd7ff, "hangul"],
  [0xf900, 0xfaff, "han"],
  [0xfb1d, 0xfb4f, "hebrew"],
  [0xfb50, 0xfdff, "arabic"],
  [0xfe0f, 0xfe0f, "emoji"], // emoji presentation selector
  [0xfe70, 0xfeff, "arabic"],
  [0xff00, 0xffef, "cjk"],
  [0xff65, 0xff9f, "kana"], // half-width katakana (inside the full-width block)
  [0x1f000, 0x1faff, "emoji"],
  [0x20000, 0x3134f, "han"],
  [0xe0020, 0xe007f, "emoji"], // tag sequences (subdivision flags)
];
const RANGE_STARTS = RANGES.map(([start]) => start);

/** The writing system of a code point above Latin, or undefined (Latin, punctuation, symbols). */
export function scriptOf(code: number): ScriptKey | undefined {
  if (code < 0x0370) return undefined;
  // Last range starting at or before the code point (binary search; ranges are sorted).
  let lo = 0;
  let hi = RANGE_STARTS.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((RANGE_STARTS[mid] ?? 0) <= code) lo = mid;
    else hi = mid - 1;
  }
  for (let i = lo; i >= 0 && i >= lo - 1; i--) {
    const range = RANGES[i];
    if (range && range[0] <= code && code <= range[1]) return range[2];
  }
  return undefined;
}

export function emptyClassTokens(): ClassTokens {
  const tokens = {} as ClassTokens;
  for (const c of FIT_MEASURES) tokens[c] = 0;
  return tokens;
}

export function addClassTokens(into: ClassTokens, add: Readonly<ClassTokens>, times = 1): void {
  for (const c of FIT_MEASURES) into[c] = (into[c] ?? 0) + (add[c] ?? 0) * times;
}

export function classTotal(tokens: Readonly<ClassTokens>): number {
  let total = 0;
  for (const c of CONTENT_CLASSES) total += tokens[c];
  return total;
}

/** The class a whole unit of this kind defaults to when its lines look like nothing special. */
export type ClassHint = "text" | "tool";

/** Characters of each writing system. */
export type ScriptCounts = Partial<Record<ScriptKey, number>>;
/** A line's non-space characters, those of each writing system, and its indentation tabs. */
type LineCensus = { chars: number; scripts: ScriptCounts; tabs: number };

function census(line: string): LineCensus {
  const scripts: ScriptCounts = {};
  let chars = 0;
  let tabs = 0;
  while (line.charCodeAt(tabs) === 0x09) tabs += 1;
  for (const ch of line) {
    const code = ch.codePointAt(0) ?? 0;
    if (code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0 || code === 0x3000) {
      continue;
    }
    chars += 1;
    const script = scriptOf(code);
    if (script) scripts[script] = (scripts[script] ?? 0) + 1;
  }
  return { chars, scripts, tabs };
}

/** Kanji with kana, as these counts hold them: Japanese with enough kana, else Chinese. */
export function chineseScript(scripts: Readonly<ScriptCounts>): "han" | "kana" {
  const han = scripts.han ?? 0;
  const kana = scripts.kana ?? 0;
  return kana > 0 && kana >= KANA_SHARE * (han + kana) ? "kana" : "han";
}

/** A writing system's letters among these counts (Chinese and Japanese: kanji and kana together). */
export function lettersOf(c: ScriptClass, scripts: Readonly<ScriptCounts>): number {
  if (c === "han" || c === "kana") return (scripts.han ?? 0) + (scripts.kana ?? 0);
  return scripts[c] ?? 0;
}

/** The writing-system class of a line, or null when it is mostly Latin, digits or punctuation. */
function scriptClass({ chars, scripts }: LineCensus): ScriptClass | null {
  const han = scripts.han ?? 0;
  const kana = scripts.kana ?? 0;
  const hangul = scripts.hangul ?? 0;
  const cjk = han + kana + hangul;
  if (cjk + (scripts.cjk ?? 0) >= SCRIPT_SHARE * chars && cjk > 0) {
    if (hangul >= han + kana) return "hangul";
    return chineseScript(scripts);
  }
  let best: ScriptClass | null = null;
  let bestCount = 0;
  let total = 0;
  for (const c of SCRIPT_CLASSES) {
    const n = scripts[c] ?? 0;
    total += n;
    if (n > bestCount) {
      best = c;
      bestCount = n;
    }
  }
  return total >= SCRIPT_SHARE * chars ? best : null;
}

/** The class of one line, or null when the line is too short to say. */
function lineClass(
  line: string,
  lineCensus: LineCensus,
  hint: ClassHint,
  inFence: boolean,
): ContentClass | null {
  if (lineCensus.chars < MIN_JUDGED_CHARS) return null;
  const script = scriptClass(lineCensus);
  if (script) return script;
  if (inFence) return "code";
  if (JSON_LINE.test(line) || (hint === "tool" && JSON_KEY.test(line))) return "json";
  if (CODE_LINE.test(line)) return "code";
  return hint === "tool" ? "json" : "prose";
}

/**
 * A run of lines of one class; `units` is its second count (MeasuredClass): a writing
 * system's letters (Chinese and Japanese: kanji and kana together), code's indentation tabs,
 * 0 for any other class. `letters` counts the characters of every writing system in it.
 */
export type ClassSegment = {
  contentClass: ContentClass;
  text: string;
  units: number;
  letters: ScriptCounts;
};

function unitsOf(c: ContentClass, { scripts, tabs }: LineCensus): number {
  if (c === "code") return tabs;
  return isScriptClass(c) && isMeasuredClass(c) ? lettersOf(c, scripts) : 0;
}

/**
 * The text cut into runs of consecutive lines of one class, in order, each
 * with its line breaks. Joined back they give the text exactly. Short and
 * blank lines join the run before them (or the first run).
 */
export function classSegments(text: string, hint: ClassHint): ClassSegment[] {
  const segments: ClassSegment[] = [];
  let pending = "";
  let pendingCensus: LineCensus = { chars: 0, scripts: {}, tabs: 0 };
  let current: ContentClass | null = null;
  let inFence = false;
  let start = 0;
  const segment = (contentClass: ContentClass): ClassSegment => ({
    contentClass,
    text: pending,
    units: unitsOf(contentClass, pendingCensus),
    letters: pendingCensus.scripts,
  });
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline + 1;
    const line = text.slice(start, end);
    start = end;
    const fence = FENCE.test(line);
    const lineCensus = fence ? { chars: 0, scripts: {}, tabs: 0 } : census(line);
    const lineCls = fence ? "code" : lineClass(line, lineCensus, hint, inFence);
    if (fence) inFence = !inFence;
    if (lineCls === null || lineCls === current || current === null) {
      current ??= lineCls;
      pending += line;
      addCensus(pendingCensus, lineCensus);
      continue;
    }
    segments.push(segment(current));
    current = lineCls;
    pending = line;
    pendingCensus = { ...lineCensus, scripts: { ...lineCensus.scripts } };
  }
  if (pending !== "" || segments.length === 0) {
    segments.push(segment(current ?? (hint === "tool" ? "json" : "prose")));
  }
  return segments;
}

function addCensus(into: LineCensus, add: LineCensus): void {
  into.chars += add.chars;
  into.tabs += add.tabs;
  for (const key in add.scripts) {
    const k = key as ScriptKey;
    into.scripts[k] = (into.scripts[k] ?? 0) + (add.scripts[k] ?? 0);
  }
}

const DIGIT_RUN = /[0-9]+/g;

/** o200k's digit tokens in a text by group length (1, 2, 3 digits). */
export function digitGroups(text: string): [number, number, number] {
  const groups: [number, number, number] = [0, 0, 0];
  for (const run of text.matchAll(DIGIT_RUN)) {
    const length = run[0].length;
    groups[2] += Math.floor(length / 3);
    if (length % 3 === 1) groups[0] += 1;
    else if (length % 3 === 2) groups[1] += 1;
  }
  return groups;
}

export function isScriptClass(c: ContentClass): c is ScriptClass {
  return (SCRIPT_CLASSES as readonly string[]).includes(c);
}

export function isMeasuredClass(c: ContentClass): c is MeasuredClass {
  return (MEASURED_CLASSES as readonly string[]).includes(c);
}
