/**
 * The one token estimator (DESIGN §5). Everything that needs a token count
 * normalizes its messages to CountUnits (see count-units.ts) and calls this.
 */
import { hash } from "node:crypto";
import { constants, PerformanceObserver } from "node:perf_hooks";
import type { ModelMessage, UIMessage } from "ai";
import { countTokens, encode } from "gpt-tokenizer/encoding/o200k_base";
import { PROBE_UNIT_DENSITY } from "./class-priors";
import {
  addClassTokens,
  type ClassHint,
  type ClassRatios,
  type ClassSegment,
  type ClassTokens,
  CONTENT_CLASSES,
  classSegments,
  classTotal,
  digitGroups,
  emptyClassTokens,
  isMeasuredClass,
  isScriptClass,
  lettersOf,
  type MeasuredClass,
  unitKey,
} from "./content-class";
import {
  type CountMessage,
  type CountUnit,
  unitsFromModelMessages,
  unitsFromUIMessage,
} from "./count-units";
import { splitByScript } from "./script-tokens";

export {
  type CountMessage,
  type CountUnit,
  unitsFromModelMessage,
  unitsFromModelMessages,
  unitsFromProviderPrompt,
  unitsFromUIMessage,
} from "./count-units";

/** Role and delimiter tokens around every chat message (OpenAI cookbook: 3–4 per message). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Call id and function-call framing around a tool call's name and arguments. */
export const TOOL_CALL_OVERHEAD_TOKENS = 8;
/** Call id and framing that ties a tool result to its call. */
export const TOOL_RESULT_OVERHEAD_TOKENS = 8;
/** An image whose dimensions we do not know: a typical photo across OpenAI, Anthropic, Google. */
export const IMAGE_DEFAULT_TOKENS = 1_000;
/** Anthropic's published rate (width × height / 750); the most expensive of the big three. */
export const IMAGE_PIXELS_PER_TOKEN = 750;
/** Providers downscale large images, so the cost of one image tops out (Anthropic ≈ 1,600). */
export const IMAGE_MAX_TOKENS = 1_600;
/** Even a tiny image costs a base amount (OpenAI's low-detail price). */
export const IMAGE_MIN_TOKENS = 85;
/** A PDF page is sent as text plus a page image: ≈ 1,500 tokens on Anthropic and Google. */
export const PDF_TOKENS_PER_PAGE = 1_500;
/** Typical bytes per page of a mixed text/graphics PDF, to guess pages from size. */
export const PDF_BYTES_PER_PAGE = 60_000;
/** Plain text and unknown formats: ≈ 4 bytes of English per o200k token. */
export const TEXT_BYTES_PER_TOKEN = 4;
/** Audio: Gemini bills 32 tokens/s; 128 kbit/s audio is 16,000 B/s → 500 B per token. */
export const AUDIO_BYTES_PER_TOKEN = 500;
/** Video: Gemini bills ≈ 263 tokens/s; ≈ 1 MB/s compressed video → ≈ 4,000 B per token. */
export const VIDEO_BYTES_PER_TOKEN = 4_000;
/** A hosted or referenced file of unknown size: about one PDF page. */
export const FILE_UNKNOWN_SIZE_TOKENS = 1_500;
/** Memo entries kept per estimator: 20k messages ≈ a few MB, far more than one turn needs. */
export const ESTIMATE_CACHE_MAX_ENTRIES = 20_000;

export type EstimateOptions = {
  /**
   * The calibrated ratio of real to estimated input tokens for the model
   * (DESIGN §5, `model_calibration`): one number applied to the total, or one
   * per content class applied to that class's tokens; rounded up.
   */
  ratio?: number | Readonly<ClassRatios>;
};

export type EstimatorStats = {
  /** Times the o200k tokenizer actually ran. */
  tokenizerCalls: number;
  cacheHits: number;
  cacheMisses: number;
};

export type TokenEstimator = {
  /** Total tokens of the messages, including per-message overhead, times `ratio`. */
  estimate(messages: readonly CountMessage[], options?: EstimateOptions): number;
  estimateUIMessages(messages: readonly UIMessage[], options?: EstimateOptions): number;
  estimateModelMessages(messages: readonly ModelMessage[], options?: EstimateOptions): number;
  /** One message's tokens, overhead included, memoized by key + content hash; no ratio. */
  countMessage(message: CountMessage): number;
  /** The raw tokens of the messages split by content class (their sum is `estimate` without ratio). */
  classTokens(messages: readonly CountMessage[]): ClassTokens;
  classTokensOfUIMessages(messages: readonly UIMessage[]): ClassTokens;
  classTokensOfModelMessages(messages: readonly ModelMessage[]): ClassTokens;
  countText(text: string): number;
  readonly stats: Readonly<EstimatorStats>;
  readonly cacheSize: number;
};

export type EstimatorConfig = {
  cacheMaxEntries?: number;
};

/**
 * An estimator with its own memo and stats. App code uses `defaultEstimator`;
 * tests make their own so that no test depends on another's cache.
 */
export function createEstimator(config: EstimatorConfig = {}): TokenEstimator {
  const cacheMaxEntries = config.cacheMaxEntries ?? ESTIMATE_CACHE_MAX_ENTRIES;
  const cache = new Map<string, ClassTokens>();
  const stats: EstimatorStats = { tokenizerCalls: 0, cacheHits: 0, cacheMisses: 0 };

  const countText = (text: string): number => {
    if (text.length === 0) return 0;
    stats.tokenizerCalls += 1;
    // User text may contain "<|endoftext|>" and the like: count it as text, never throw.
    let count = 0;
    for (const piece of encoderPieces(text)) {
      count += countTokens(piece, { disallowedSpecial: NO_SPECIAL_TOKENS });
    }
    return count;
  };
  const tokenizer: Tokenizer = {
    count: countText,
    encode: (text) => {
      if (text.length === 0) return [];
      stats.tokenizerCalls += 1;
      const pieces = encoderPieces(text);
      if (pieces.length === 1) return encode(text, { disallowedSpecial: NO_SPECIAL_TOKENS });
      return pieces.flatMap((piece) => encode(piece, { disallowedSpecial: NO_SPECIAL_TOKENS }));
    },
  };

  /**
   * A stored message's units (frozen, count-units.ts) are estimated about four times a turn:
   * after the first, its tokens are found by the list itself, without a key to build and look up.
   */
  const frozenTokens = new WeakMap<readonly CountUnit[], ClassTokens>();

  /** Tokens of a message's units by class, memoized by message id + content hash (LRU). */
  const unitsTokens = (key: string | undefined, units: readonly CountUnit[]): ClassTokens => {
    const frozen = Object.isFrozen(units);
    const known = frozen ? frozenTokens.get(units) : undefined;
    if (known !== undefined) {
      stats.cacheHits += 1;
      return known;
    }
    const cacheKey = `${key ?? ""}#${unitsHash(units)}`;
    let tokens = cache.get(cacheKey);
    if (tokens !== undefined) {
      stats.cacheHits += 1;
      cache.delete(cacheKey); // re-insert: Map order doubles as recency order
      cache.set(cacheKey, tokens);
    } else {
      stats.cacheMisses += 1;
      tokens = emptyClassTokens();
      for (const unit of units) unitClassTokens(unit, tokenizer, tokens);
      cache.set(cacheKey, tokens);
      if (cache.size > cacheMaxEntries) {
        const oldest = cache.keys().next();
        if (!oldest.done) cache.delete(oldest.value);
      }
    }
    if (frozen) frozenTokens.set(units, tokens);
    return tokens;
  };

  /** Adds one message's tokens, its per-message framing as `frame`, into `into`. */
  const addMessage = (into: ClassTokens, message: CountMessage): void => {
    if (message.units.length === 0 && !message.wireMessages) return;
    addClassTokens(into, unitsTokens(message.key, message.units));
    into.frame += (message.wireMessages ?? 1) * MESSAGE_OVERHEAD_TOKENS;
  };

  const countMessage = (message: CountMessage): number => {
    const tokens = emptyClassTokens();
    addMessage(tokens, message);
    return classTotal(tokens);
  };

  const classTokens = (messages: readonly CountMessage[]): ClassTokens => {
    const tokens = emptyClassTokens();
    for (const message of messages) addMessage(tokens, message);
    return tokens;
  };

  const estimate = (messages: readonly CountMessage[], options: EstimateOptions = {}): number =>
    applyRatio(classTokens(messages), options.ratio);

  return {
    estimate,
    estimateUIMessages: (messages, options) => estimate(messages.map(unitsFromUIMessage), options),
    estimateModelMessages: (messages, options) =>
      estimate(unitsFromModelMessages(messages), options),
    countMessage,
    classTokens,
    classTokensOfUIMessages: (messages) => classTokens(messages.map(unitsFromUIMessage)),
    classTokensOfModelMessages: (messages) => classTokens(unitsFromModelMessages(messages)),
    countText,
    stats,
    get cacheSize() {
      return cache.size;
    },
  };
}

/** The shared estimator for app code. */
export const defaultEstimator: TokenEstimator = createEstimator();

/**
 * V8 drops a regular expression's compiled code once two full collections pass without it
 * running, as they do between two turns while other requests or a long reply's stream fill the
 * heap. Compiling o200k's split pattern again (Unicode property classes) then cost the next
 * turn 11–25 ms of CPU on a 2-core machine, more than the rest of the turn. Counting one letter
 * after each full collection keeps it compiled, for a few microseconds.
 */
const GC_MAJOR = constants.NODE_PERFORMANCE_GC_MAJOR;
let warmCounts = 0;
new PerformanceObserver((entries) => {
  const full = entries
    .getEntries()
    .some((entry) => (entry as { detail?: { kind?: number } }).detail?.kind === GC_MAJOR);
  if (full) {
    countTokens("a");
    warmCounts += 1;
  }
}).observe({ entryTypes: ["gc"] });

/** Full collections after which the tokenizer ran to stay compiled (see above). */
export function tokenizerWarmCounts(): number {
  return warmCounts;
}

export function countTextTokens(text: string): number {
  return defaultEstimator.countText(text);
}

/** o200k's count of a text, and its tokens (a script segment's are split by writing system). */
export type Tokenizer = {
  count: (text: string) => number;
  encode: (text: string) => readonly number[];
};

/** Tokens of a text split by content class, added into `into`. */
function addTextTokens(
  text: string,
  hint: ClassHint,
  tokenizer: Tokenizer,
  into: ClassTokens,
): void {
  for (const segment of classSegments(text, hint)) {
    const [one, two, three] = digitGroups(segment.text);
    const digits = one + two + three;
    const cls = segment.contentClass;
    if (!holdsScripts(segment)) {
      const tokens = tokenizer.count(segment.text) - digits;
      into[cls] += tokens;
      if (isMeasuredClass(cls)) addUnits(cls, tokens, segment.units, into);
    } else {
      addSplitTokens(segment, tokenizer.encode(segment.text), digits, into);
    }
    into.digits1 += one;
    into.digits2 += two;
    into.digits3 += three;
  }
}

/** Whether a segment holds any writing system's characters (emoji too). */
function holdsScripts(segment: ClassSegment): boolean {
  return Object.keys(segment.letters).length > 0;
}

/**
 * A prose, JSON or code segment's tokens split by the writing system of each
 * (script-tokens.ts), its digit groups taken from its own class, and each measured system's
 * letters beside its tokens.
 */
function addSplitTokens(
  segment: ClassSegment,
  ids: readonly number[],
  digits: number,
  into: ClassTokens,
): void {
  const cls = segment.contentClass;
  const split = splitByScript(segment, ids);
  split.set(cls, Math.max(0, (split.get(cls) ?? 0) - digits));
  for (const [c, tokens] of split) {
    into[c] += tokens;
    if (c === cls) {
      if (isMeasuredClass(c)) addUnits(c, tokens, segment.units, into);
    } else if (isScriptClass(c) && isMeasuredClass(c)) {
      addUnits(c, tokens, lettersOf(c, segment.letters), into);
    }
  }
}

/**
 * A measured class's second count, no sparser than the sparsest probe of its class: a segment
 * that mixes in markup or other text is priced as ordinary text of its class, not extrapolated
 * below it.
 */
function addUnits(c: MeasuredClass, tokens: number, units: number, into: ClassTokens): void {
  const [, lowest] = PROBE_UNIT_DENSITY[c];
  const key = unitKey(c);
  into[key] = (into[key] ?? 0) + Math.max(lowest * tokens, units);
}

/**
 * Tokens of one unit by content class, added into `into`. Files and images are
 * priced from the modality table, never tokenized, and count as prose.
 */
export function unitClassTokens(unit: CountUnit, tokenizer: Tokenizer, into: ClassTokens): void {
  switch (unit.type) {
    case "text":
    case "summary":
      addTextTokens(unit.text, "text", tokenizer, into);
      return;
    case "tool-call":
      into.call += tokenizer.count(`${unit.toolName} ${unit.input}`) + TOOL_CALL_OVERHEAD_TOKENS;
      return;
    case "tool-result":
      addTextTokens(unit.output, "tool", tokenizer, into);
      into.frame += TOOL_RESULT_OVERHEAD_TOKENS;
      return;
    case "image":
      into.prose += imageTokens(unit.width, unit.height);
      return;
    case "file":
      into.prose += fileTokens(unit.mediaType, unit.byteSize);
      return;
  }
}

export function imageTokens(width?: number, height?: number): number {
  if (!width || !height) return IMAGE_DEFAULT_TOKENS;
  const tokens = Math.ceil((width * height) / IMAGE_PIXELS_PER_TOKEN);
  return Math.min(IMAGE_MAX_TOKENS, Math.max(IMAGE_MIN_TOKENS, tokens));
}

export function fileTokens(mediaType: string, byteSize?: number): number {
  if (byteSize === undefined) return FILE_UNKNOWN_SIZE_TOKENS;
  if (mediaType === "application/pdf") {
    return Math.max(1, Math.ceil(byteSize / PDF_BYTES_PER_PAGE)) * PDF_TOKENS_PER_PAGE;
  }
  if (mediaType.startsWith("audio")) return Math.ceil(byteSize / AUDIO_BYTES_PER_TOKEN);
  if (mediaType.startsWith("video")) return Math.ceil(byteSize / VIDEO_BYTES_PER_TOKEN);
  return Math.ceil(byteSize / TEXT_BYTES_PER_TOKEN);
}

/** Raw class tokens times a ratio (one, or one per class), rounded up. */
export function applyRatio(
  tokens: Readonly<ClassTokens>,
  ratio: number | Readonly<ClassRatios> = 1,
): number {
  if (typeof ratio === "number") {
    const total = classTotal(tokens);
    return !Number.isFinite(ratio) || ratio <= 0 ? total : Math.ceil(total * ratio);
  }
  let total = 0;
  for (const c of CONTENT_CLASSES) {
    const r = ratio[c];
    const measured = isMeasuredClass(c);
    // A measured class's token ratio is its price less its letters' (classRatios): it may be
    // below zero when letters carry the price (Qwen on Hindi), and its sum with them is not.
    const valid = Number.isFinite(r) && (measured || r >= 0);
    let cost = tokens[c] * (valid ? r : 1);
    if (measured) {
      const perUnit = ratio[unitKey(c)] ?? 0;
      if (Number.isFinite(perUnit)) cost += (tokens[unitKey(c)] ?? 0) * perUnit;
    }
    // A second count's term may be negative; a class never costs less than nothing.
    total += Math.max(0, cost);
  }
  return Math.ceil(total);
}

const NO_SPECIAL_TOKENS: Set<string> = new Set();

/**
 * o200k's encoder merges each of its pre-tokens (a run of letters, of CJK characters, of
 * punctuation or of spaces) in time that grows with the square of the run's length: a pasted
 * run of 40,000 characters without a break held the server's one thread for seconds, before any
 * size check could refuse it. Such text reaches the encoder in pieces of at most this many
 * characters, so its time grows with its length; a cut inside a run costs a token or so.
 */
export const ENCODER_PIECE_CHARS = 1_000;
/** A cut is made at a space this close before the piece's end when there is one: words stay whole. */
const CUT_AT_SPACE_WITHIN = 200;
/** The text as the encoder gets it: whole, unless it holds a run too long to merge at once. */
export function encoderPieces(text: string): string[] {
  if (text.length <= ENCODER_PIECE_CHARS || !holdsLongRun(text)) return [text];
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > ENCODER_PIECE_CHARS) {
    let end = start + ENCODER_PIECE_CHARS;
    const space = text.lastIndexOf(" ", end);
    // Before a space: the next piece starts with " word", the pre-token the word had.
    if (space > start && space >= end - CUT_AT_SPACE_WITHIN) end = space;
    // Never between the two halves of a character outside the BMP.
    else if (isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    pieces.push(text.slice(start, end));
    start = end;
  }
  pieces.push(text.slice(start));
  return pieces;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** Spaces as the encoder's pre-tokens treat them (ASCII, no-break, the Unicode spaces). */
const isSpace = (code: number) =>
  code === 0x20 ||
  (code >= 0x09 && code <= 0x0d) ||
  code === 0xa0 ||
  code === 0x3000 ||
  (code >= 0x2000 && code <= 0x200a) ||
  code === 0x2028 ||
  code === 0x2029;

/**
 * Whether the text holds ENCODER_PIECE_CHARS characters in a row without a change between
 * space and non-space: one pass (a pattern for it would try each start anew).
 */
function holdsLongRun(text: string): boolean {
  let run = 0;
  let inSpace = false;
  for (let i = 0; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i));
    if (space === inSpace) {
      run += 1;
      if (run >= ENCODER_PIECE_CHARS) return true;
    } else {
      inSpace = space;
      run = 1;
    }
  }
  return false;
}

/** Hashes of frozen unit lists: a stored message's, which cannot change (count-units.ts). */
const hashedUnits = new WeakMap<readonly CountUnit[], string>();

function unitsHash(units: readonly CountUnit[]): string {
  if (!Object.isFrozen(units)) return hashUnits(units);
  let hashed = hashedUnits.get(units);
  if (hashed === undefined) {
    hashed = hashUnits(units);
    hashedUnits.set(units, hashed);
  }
  return hashed;
}

/**
 * Content hash of a message's units (SHA-1 over their JSON, in native code: every turn hashes
 * each message it sends to find its cached count). Units hold sizes, not file bytes, so this
 * is cheap even for messages with large attachments.
 */
function hashUnits(units: readonly CountUnit[]): string {
  const json = JSON.stringify(units);
  return `${hash("sha1", json, "base64")}:${json.length}`;
}
