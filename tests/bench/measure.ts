/** Small statistics shared by the benchmarks. */

/** Nearest-rank percentile: always a value that was observed, never an interpolation. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error("percentile of no values");
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/** Rounds to 0.1: finer digits of a wall-clock time are noise. */
export function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
