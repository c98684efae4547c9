import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { Figures } from "./benchmark";

/** How `npm run bench` shows its figures and keeps them in tests/bench/results.json. */

export type Row = { figure: string; value: number; notes: string | undefined };

/**
 * The unit words a figure's name may hold, as whole `_`-separated words: `turn.wall_ms_1000`,
 * `lifecycle.stop_to_provider_abort_ms_p95`, `lifecycle.crash_unlock_s`, `sim.seconds`,
 * `memory.user_kept_pct`, `sim.summarizer_input_ratio_pruned`. A word that only contains one
 * (`lifecycle.backtoback_409s`) does not count.
 */
const UNIT_WORDS: ReadonlyMap<string, string> = new Map([
  ["ms", "ms"],
  ["s", "s"],
  ["seconds", "s"],
  ["pct", "%"],
  ["tokens", "tokens"],
  ["ratio", "ratio"],
  ["fps", "fps"],
]);

/** The unit a figure's name holds (after the benchmark's prefix); names without one are plain counts. */
export function unitOf(figure: string): string {
  const words = figure.slice(figure.indexOf(".") + 1).split("_");
  const word = words.find((candidate) => UNIT_WORDS.has(candidate));
  return (word && UNIT_WORDS.get(word)) ?? "count";
}

/** A plain-text table: figure name | value | unit/notes. */
export function formatTable(rows: readonly Row[]): string {
  const header = { figure: "figure", value: "value", notes: "unit / notes" };
  const lines = rows.map((row) => ({
    figure: row.figure,
    value: String(row.value),
    notes: row.notes ? `${unitOf(row.figure)} — ${row.notes}` : unitOf(row.figure),
  }));
  const figureWidth = Math.max(header.figure.length, ...lines.map((l) => l.figure.length));
  const valueWidth = Math.max(header.value.length, ...lines.map((l) => l.value.length));
  const format = (l: typeof header) =>
    `${l.figure.padEnd(figureWidth)}  ${l.value.padStart(valueWidth)}  ${l.notes}`.trimEnd();
  const rule = `${"-".repeat(figureWidth)}  ${"-".repeat(valueWidth)}  ${"-".repeat(header.notes.length)}`;
  return [format(header), rule, ...lines.map(format)].join("\n");
}

/** The figures already in `file`; an unreadable file is reported and treated as empty. */
function readResults(file: string): Figures {
  if (!existsSync(file)) return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new Error("not a JSON object");
    }
    const figures: Figures = {};
    for (const [name, value] of Object.entries(parsed)) {
      if (typeof value === "number") figures[name] = value;
    }
    return figures;
  } catch (error) {
    console.warn(`${file} is unreadable (${String(error)}); starting it afresh`);
    return {};
  }
}

/** Overwrites only the figures produced now; the others keep their last measured value. */
export function mergeResults(file: string, produced: Figures): void {
  const merged: Figures = { ...readResults(file), ...produced };
  const sorted = Object.fromEntries(
    Object.keys(merged)
      .sort()
      .map((name) => [name, merged[name]]),
  );
  writeFileSync(file, `${JSON.stringify(sorted, null, 2)}\n`);
}
