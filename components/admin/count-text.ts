/**
 * Counts as an admin types them: digits, plain or grouped by commas or spaces in threes
 * ("128,000", "16 384") or the Indian way ("1,00,000"). Nothing else: a dot groups thousands
 * in some locales and marks decimals in others, so "8.000" is no count, and neither is "8,5"
 * (a decimal comma) or "1 2".
 */
const COUNT_TEXT = /^(?:\d+|\d{1,3}(?:[\s,]\d{3})+|\d{1,2}(?:[\s,]\d{2})*[\s,]\d{3})$/;

/** The tail of a field's message for text that is no count ("Window " + this), of what it counts. */
export function notACount(of?: string): string {
  return `must be a whole number${of ? ` of ${of}` : ""}, in digits (commas or spaces may group them)`;
}

/** Empty, or a count as written above. */
export function isCountText(text: string): boolean {
  const trimmed = text.trim();
  return trimmed === "" || COUNT_TEXT.test(trimmed);
}

/** Empty is null; text that is no count is NaN, which a schema refuses. */
export function parsedCount(text: string): number | null {
  if (!isCountText(text)) return Number.NaN;
  const digits = withoutSeparators(text);
  return digits === "" ? null : Number(digits);
}

/** The text without the separators a count is often written with: commas and spaces. */
export function withoutSeparators(text: string): string {
  return text.replace(/[\s,]/g, "");
}
