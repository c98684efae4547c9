/**
 * What Postgres can store. `text` and `jsonb` refuse U+0000, and `jsonb`
 * refuses a lone UTF-16 surrogate; both reach Fold from tool output, model
 * output and summaries. They are replaced by U+FFFD, the replacement
 * character, so one odd byte never costs a reply or a compaction.
 */

const NUL = String.fromCharCode(0);
const REPLACEMENT = "\uFFFD";

export function storableText(text: string): string {
  return text.replaceAll(NUL, REPLACEMENT).toWellFormed();
}

/** A JSON value with every string (keys included) made storable; unchanged values are returned as is. */
export function storableJson<T>(value: T): T {
  if (typeof value === "string") return storableText(value) as T;
  if (Array.isArray(value)) return value.map(storableJson) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[storableText(key)] = storableJson(item);
    return out as T;
  }
  return value;
}
