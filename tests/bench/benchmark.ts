/**
 * The contract between `npm run bench` (run.ts) and a benchmark module in tests/bench/.
 * A module exports `benchmark: Benchmark` and is listed in run.ts's BENCHMARKS.
 */

/** Figure name → value. Names are `<module>.<what>_<unit>`, e.g. `chat.ttft_overhead_p50_ms`. */
export type Figures = Record<string, number>;

/** Lets a benchmark say how a figure was measured; printed beside it in the table. */
export type BenchContext = { note(figure: string, text: string): void };

export type Benchmark = {
  /** What `--only` selects; also the prefix of every figure it reports. */
  name: string;
  /** Runs in a process of its own, so it may set process.env before importing Fold. */
  run(context: BenchContext): Promise<Figures>;
};
