/** A fixed locale: the server's render matches the browser's, and the words read the same everywhere. */
const counts = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** A count as Fold writes every number of things: 1234 → "1,234" (a fraction rounds off). */
export function formatCount(n: number): string {
  return counts.format(n);
}

/**
 * A count with its noun, as Fold writes it: "1 message", "1,204 messages", "2 replies" (`many`
 * for a noun whose plural is more than an added "s").
 */
export function countOf(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}
