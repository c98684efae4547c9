/**
 * Identifiers in a span (DESIGN §8, "Preservation guard"): the URLs, paths,
 * emails, hashes, numbers with units, code spans and the user's quoted words
 * that a summary must not lose. Read from the full, unpruned messages.
 */
import { type DynamicToolUIPart, getToolName, isToolUIPart, type ToolUIPart } from "ai";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { COMPACTION_TRACE_TOOL_NAME } from "@/lib/message/ui-message";

/** Longer values are blobs (signed URLs, data), not references worth their tokens. */
const IDENTIFIER_MAX_CHARS = 300;
const QUOTE_MIN_CHARS = 3;
const QUOTE_MAX_CHARS = 120;
const CODE_MIN_CHARS = 2;
const CODE_MAX_CHARS = 200;

export type IdentifierKind = "url" | "email" | "path" | "hash" | "quantity" | "code" | "quote";

/** Where in a message an identifier was seen: the reference ledger ranks them (DESIGN §16). */
export type IdentifierOrigin = "user" | "assistant" | "tool-args" | "tool-result";

export type Identifier = {
  value: string;
  kind: IdentifierKind;
  /** Seen in a user message at least once: the user's own words outrank everything else. */
  fromUser: boolean;
  /** Occurrences across the span. */
  count: number;
  /** Index in the span of the last message that mentions it; -1 when carried from a summary. */
  lastIndex: number;
};

type Pattern = {
  kind: IdentifierKind;
  regex: RegExp;
  mask: boolean;
  clean?: (s: string) => string;
  /** Whether a (cleaned) match is one: a match it refuses is neither kept nor masked. */
  keep?: (s: string) => boolean;
};

const UNIT =
  "(?:KiB|MiB|GiB|TiB|KB|MB|GB|TB|PB|bytes?|[KMG]bps|[kMGT]?Hz|ms|µs|ns|sec(?:ond)?s?|min(?:ute)?s?|hours?|hrs?|days?|weeks?|months?|years?|px|rem|em|pt|vh|vw|km|cm|mm|kg|mg|lbs?|°[CF]|tokens?|req/s|rps|qps|fps|kWh|kW|mAh|mA|USD|EUR|GBP|€|£|\\$|percent|%|h|s|d|m|g|W|V|B)";
/**
 * Bounded: a pattern that may start at each of a long chain's groups ("1,1,1,…", a pasted CSV
 * row) and run to its end would take time in the square of its length.
 */
const NUMBER = "\\d{1,24}(?:[.,]\\d{1,24}){0,8}";
const trimTrailing = (s: string) => s.replace(/[.,;:!?]+$/, "");

/** In the order they run: URLs are masked before paths so a URL's path is not listed twice. */
const ATOMIC_PATTERNS: Pattern[] = [
  {
    kind: "url",
    regex: /\b(?:https?|ftp|wss?|file):\/\/[^\s<>"'`\]}]+/g,
    mask: true,
    clean: (s) => balanceParens(trimTrailing(s)),
  },
  // Bounded as addresses are (a local part of at most 64, a label of 63): unbounded, it ran from
  // each word of a long "a.a.a.…" to its end.
  { kind: "email", regex: /\b[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}\b/g, mask: true },
  {
    kind: "path",
    // C:\Users\ada\notes.txt; a folder's name may hold spaces (C:\Program Files\Fold\fold.exe)
    // but no dot ("C:\tmp\a.txt to backup\" is a path and words, not one path). Bounded.
    regex:
      /\b[A-Za-z]:\\(?:(?:[^\\\s<>:"|?*]{1,255}|[^\\\s<>:"|?*.]{1,64}(?: [^\\\s<>:"|?*.]{1,64}){1,8})\\){0,32}[^\\\s<>:"|?*]*/g,
    mask: true,
    clean: trimTrailing,
  },
  {
    kind: "path",
    // ./x, ../x, ~/x, or an absolute path with two segments or an extension.
    regex:
      /(?<=^|[\s(["'=:,])(?:(?:~|\.{1,2})\/[\w.@+-][\w.@+/-]*|\/[\w.@+-]+\/[\w.@+-][\w.@+/-]*|\/[\w@+-]+\.[\w.@+-]+)/g,
    mask: true,
    clean: trimTrailing,
  },
  {
    kind: "path",
    // A relative path, as a project names its files: src/app/page.tsx (its last segment with an
    // extension), or lib/compaction/fold with three segments and more; "and/or" or "km/h" is
    // not one. Bounded, as a long "a/a/a/…" would otherwise be read from each of its segments.
    regex: /(?<=^|[\s(["'=:,])[A-Za-z_@][\w.@+-]{0,99}(?:\/[\w.@+-]{1,100}){1,30}\/?/g,
    mask: true,
    clean: trimTrailing,
    keep: (s) => /\.[A-Za-z][A-Za-z0-9]{0,9}$/.test(s) || s.split("/").filter(Boolean).length >= 3,
  },
  {
    kind: "hash",
    regex: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
    mask: true,
  },
  { kind: "hash", regex: /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/gi, mask: true },
  {
    kind: "quantity",
    regex: new RegExp(
      // A space, never a line break, between a number and its unit: "1\nm" is two lines.
      `[$€£][^\\S\\n]?${NUMBER}(?:[^\\S\\n]?(?:k|K|M|bn|million|billion)\\b)?|(?<![\\w.])${NUMBER}[^\\S\\n]?${UNIT}(?!\\w)`,
      "gi",
    ),
    mask: false,
  },
];

const CODE_PATTERN = new RegExp(
  `(?<!\`)\`([^\`\\n]{${CODE_MIN_CHARS},${CODE_MAX_CHARS}})\`(?!\`)`,
  "g",
);
const QUOTE_PATTERNS = [
  /"([^"\n]+)"/g,
  /“([^”\n]+)”/g,
  /(?<!\w)'([^'\n]+)'(?!\w)/g, // an apostrophe inside a word never opens or closes a quote
];

/**
 * Identifiers in the full, unpruned span: user and assistant text, tool
 * arguments, tool outputs and errors. Quoted strings count only in user
 * messages. Sorted by priority: the user's first, then by count, then recency.
 */
export function extractIdentifiers(messages: readonly FoldUIMessage[]): Identifier[] {
  const found = new Map<string, Identifier & { first: number }>();
  const add = (value: string, kind: IdentifierKind, fromUser: boolean, index: number) => {
    if (value.length === 0 || value.length > IDENTIFIER_MAX_CHARS) return;
    const known = found.get(value);
    if (known) {
      known.count += 1;
      known.lastIndex = index;
      known.fromUser ||= fromUser;
    } else {
      found.set(value, { value, kind, fromUser, count: 1, lastIndex: index, first: found.size });
    }
  };
  messages.forEach((message, index) => {
    for (const { value, kind, origin } of identifierOccurrences(message))
      add(value, kind, origin === "user", index);
  });
  return [...found.values()].sort(byPriority).map(({ first: _first, ...id }) => id);
}

function byPriority(a: Identifier & { first: number }, b: Identifier & { first: number }): number {
  return (
    Number(b.fromUser) - Number(a.fromUser) ||
    b.count - a.count ||
    b.lastIndex - a.lastIndex ||
    a.first - b.first
  );
}

/** Every identifier in one text, in order of appearance per pattern. */
export function identifiersInText(text: string, fromUser: boolean): [string, IdentifierKind][] {
  const out: [string, IdentifierKind][] = [];
  for (const match of text.matchAll(CODE_PATTERN)) out.push([(match[1] ?? "").trim(), "code"]);
  if (fromUser) {
    for (const pattern of QUOTE_PATTERNS) {
      for (const match of text.matchAll(pattern)) {
        const inner = match[1] ?? "";
        if (inner.length < QUOTE_MIN_CHARS || inner.length > QUOTE_MAX_CHARS) continue;
        if (inner.trim() !== inner) continue; // spans the gap between two quotations
        out.push([inner, "quote"]);
      }
    }
  }
  let rest = text;
  // One pass a pattern: each match it keeps is taken, and masked when the pattern masks.
  for (const { kind, regex, mask, clean, keep } of ATOMIC_PATTERNS) {
    const read = rest.replace(regex, (match) => {
      const value = clean ? clean(match) : match;
      if (keep && !keep(value)) return match;
      out.push([value, kind]);
      return mask ? " " : match;
    });
    if (mask) rest = read;
  }
  return out;
}

export type IdentifierOccurrence = {
  value: string;
  kind: IdentifierKind;
  origin: IdentifierOrigin;
};

/** Every identifier one message carries, each with where in the message it was. */
export function identifierOccurrences(message: FoldUIMessage): IdentifierOccurrence[] {
  const out: IdentifierOccurrence[] = [];
  for (const { text, origin } of messageTexts(message)) {
    for (const [value, kind] of identifiersInText(text, origin === "user")) {
      if (value.length > 0 && value.length <= IDENTIFIER_MAX_CHARS)
        out.push({ value, kind, origin });
    }
  }
  return out;
}

type Text = { text: string; origin: IdentifierOrigin };

/** The texts of a message that carry identifiers; tool values are walked, not JSON-escaped. */
function messageTexts(message: FoldUIMessage): Text[] {
  const origin: IdentifierOrigin = message.role === "user" ? "user" : "assistant";
  const texts: Text[] = [];
  for (const part of message.parts) {
    if (part.type === "text") texts.push({ text: part.text, origin });
    else if (part.type === "steering-message") {
      for (const p of part.parts)
        if (p.type === "text") texts.push({ text: p.text, origin: "user" });
    } else if (isToolUIPart(part)) texts.push(...toolTexts(part));
  }
  return texts;
}

function toolTexts(part: ToolUIPart | DynamicToolUIPart): Text[] {
  if (getToolName(part) === COMPACTION_TRACE_TOOL_NAME) return [];
  const args: string[] = [];
  collectStrings(part.input, args);
  const results: string[] = [];
  if (part.state === "output-available") collectStrings(part.output, results);
  if (part.state === "output-error") results.push(part.errorText);
  return [
    ...args.map((text) => ({ text, origin: "tool-args" as const })),
    ...results.map((text) => ({ text, origin: "tool-result" as const })),
  ];
}

function collectStrings(value: unknown, into: string[]): void {
  if (typeof value === "string") into.push(value);
  else if (typeof value === "number" || typeof value === "boolean") return;
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, into);
  else if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) collectStrings(item, into);
  }
}

/** Drops a trailing ")" a URL does not open (prose around a link), keeps Wikipedia-style ones. */
function balanceParens(url: string): string {
  let out = url;
  while (out.endsWith(")") && count(out, "(") < count(out, ")"))
    out = trimTrailing(out.slice(0, -1));
  return out;
}

function count(text: string, char: string): number {
  return text.split(char).length - 1;
}
