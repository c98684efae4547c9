/**
 * Text Postgres cannot store: `text` and `jsonb` refuse U+0000, and `jsonb`
 * refuses a lone UTF-16 surrogate. What a user sends is checked at the edge and
 * refused with a 400 that says which field and why; output Fold produces itself
 * (model replies, tool results, summaries) is repaired instead by
 * lib/db/storable.ts, so one odd byte never costs a reply.
 */
import type { z } from "zod";

const NUL = String.fromCharCode(0);

/** Why Postgres would refuse this text, or null when it can be stored. */
export function unstorableReason(text: string): string | null {
  if (text.includes(NUL)) return "contains a NUL character (U+0000), which Fold cannot store";
  if (!text.isWellFormed())
    return "contains a lone surrogate (broken Unicode), which Fold cannot store";
  return null;
}

/** `at`, or one before it when a cut there would split a surrogate pair (an emoji, a rare Han character). */
export function codePointBoundary(text: string, at: number): number {
  return at > 0 && at < text.length && /[\uD800-\uDBFF]/.test(text.charAt(at - 1)) ? at - 1 : at;
}

/** The first `max` UTF-16 units of `text`, one fewer when that would split a surrogate pair. */
export function headOf(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, codePointBoundary(text, max));
}

/** The last `max` UTF-16 units of `text`, one fewer when that would split a surrogate pair. */
export function tailOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const from = text.length - max;
  return text.slice(codePointBoundary(text, from) === from ? from : from + 1);
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
/** How far past a cut a grapheme may reach (a ZWJ family is 11 units, a letter with marks a few). */
const GRAPHEME_REACH = 64;

/**
 * The first `max` UTF-16 units of `text` or fewer, ending between whole graphemes: no flag,
 * ZWJ family, skin tone or letter with its marks is cut in two (a title, a label).
 */
export function graphemeHeadOf(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = 0;
  for (const { index, segment } of graphemes.segment(text.slice(0, max + GRAPHEME_REACH))) {
    if (index + segment.length > max) break;
    end = index + segment.length;
  }
  return text.slice(0, end);
}

/** `schema` refusing text Postgres cannot store, the message naming the field (`label`). */
export function storable<S extends z.ZodType<string>>(schema: S, label: string): S {
  return schema.refine((text) => unstorableReason(text) === null, {
    error: (issue) => `${label} ${unstorableReason(String(issue.input)) ?? ""}`.trim(),
  });
}

const MAX_DEPTH = 64;

/**
 * The first string (key or value) in a parsed JSON value that Postgres would refuse, with its
 * path: a net under every schema, so a field a schema forgot still never reaches the database.
 */
export function findUnstorableText(
  value: unknown,
  path: (string | number)[] = [],
): { path: (string | number)[]; reason: string } | null {
  if (typeof value === "string") {
    const reason = unstorableReason(value);
    return reason ? { path, reason } : null;
  }
  if (value === null || typeof value !== "object" || path.length > MAX_DEPTH) return null;
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((item, i) => [i, item])
    : Object.entries(value);
  for (const [key, item] of entries) {
    if (typeof key === "string") {
      const reason = unstorableReason(key);
      if (reason) return { path: [...path, key], reason: `has a key that ${reason}` };
    }
    const found = findUnstorableText(item, [...path, key]);
    if (found) return found;
  }
  return null;
}
