// `npm run bench [-- --only chat,estimator]`: runs the benchmarks, prints their figures and
// merges them into tests/bench/results.json.
import { fork } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
// @ts-expect-error -- a plain .mjs script shared with `npm start` and the e2e runner
import { serverNodeOptions } from "../../scripts/server-runtime.mjs";
import type { Benchmark, Figures } from "./benchmark";
import { formatTable, mergeResults, type Row } from "./report";

/**
 * Every benchmark, in run order. To add one: write tests/bench/<name>.ts exporting
 * `benchmark: Benchmark` and add a line here. Modules load lazily, each in a child process:
 * Fold parses its environment once per process, and a benchmark may need its own.
 */
const BENCHMARKS: ReadonlyArray<{ name: string; load: () => Promise<{ benchmark: Benchmark }> }> = [
  { name: "chat", load: () => import("./chat") },
  { name: "estimator", load: () => import("./estimator") },
  { name: "sim", load: () => import("./sim") },
  { name: "tier1", load: () => import("./tier1") },
  { name: "turn", load: () => import("./turn") },
  { name: "compaction", load: () => import("./compaction") },
  { name: "recovery", load: () => import("./recovery") },
  { name: "memory", load: () => import("./memory") },
  { name: "replay", load: () => import("./replay") },
  { name: "toolloop200", load: () => import("./toolloop") },
  { name: "security", load: () => import("./security") },
  { name: "stall", load: () => import("./stall") },
  { name: "local", load: () => import("./local") },
  { name: "lifecycle", load: () => import("./lifecycle") },
  { name: "ui", load: () => import("./ui") },
];

const THIS_FILE = fileURLToPath(import.meta.url);
const RESULTS_FILE = path.join(path.dirname(THIS_FILE), "results.json");
/** A benchmark that reported but still holds the process open has leaked a handle. */
const CHILD_EXIT_GRACE_MS = 10_000;

type Outcome =
  | { ok: true; figures: Figures; notes: Record<string, string> }
  | { ok: false; error: string };

function selectedNames(args: readonly string[]): string[] {
  const all = BENCHMARKS.map((b) => b.name);
  const at = args.findIndex((a) => a === "--only" || a.startsWith("--only="));
  if (at === -1) return all;
  const arg = args[at] ?? "";
  const list = arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : (args[at + 1] ?? "");
  const names = list
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !all.includes(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(
      `--only needs benchmark names from: ${all.join(", ")}${unknown.length ? ` (unknown: ${unknown.join(", ")})` : ""}`,
    );
  }
  return all.filter((n) => names.includes(n));
}

/** Child side: run one benchmark and send its outcome to the parent. */
async function runChild(name: string): Promise<number> {
  const notes: Record<string, string> = {};
  let outcome: Outcome;
  try {
    const entry = BENCHMARKS.find((b) => b.name === name);
    if (!entry) throw new Error(`no benchmark named ${name}`);
    const { benchmark } = await entry.load();
    if (benchmark.name !== name)
      throw new Error(`${name} exports a benchmark named ${benchmark.name}`);
    const figures = await benchmark.run({
      note: (figure, text) => {
        notes[figure] = text;
      },
    });
    for (const [figure, value] of Object.entries(figures)) {
      if (!Number.isFinite(value)) throw new Error(`${figure} is not a finite number: ${value}`);
    }
    outcome = { ok: true, figures, notes };
  } catch (error) {
    outcome = {
      ok: false,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    };
  }
  await new Promise<void>((resolve) => process.send?.(outcome, () => resolve()));
  process.disconnect?.();
  return outcome.ok ? 0 : 1;
}

/**
 * The benchmarks measure compaction, turns and memory, not who may register or how fast: each
 * registers several users and sends hundreds of turns a minute, so registration is open and the
 * rate limits are off in every child, unless a benchmark (or the caller) sets them itself.
 */
const BENCH_ENV_DEFAULTS: Record<string, string> = {
  REGISTRATION: "open",
  RATE_LIMIT_SIGN_IN_PER_MINUTE: "0",
  RATE_LIMIT_SIGN_IN_FAILURES_PER_ACCOUNT: "0",
  RATE_LIMIT_SIGN_UP_PER_HOUR: "0",
  RATE_LIMIT_TURNS_PER_MINUTE: "0",
};

/** Parent side: one child process per benchmark; its stdout joins our stderr, so stdout is the table. */
function runInChild(name: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = fork(THIS_FILE, ["--child", name], {
      stdio: ["ignore", 2, 2, "ipc"],
      // In-process benchmarks run Fold's handlers in the child: on Node as the server runs it.
      env: {
        ...BENCH_ENV_DEFAULTS,
        ...process.env,
        NODE_OPTIONS: serverNodeOptions(process.env.NODE_OPTIONS),
      },
    });
    let outcome: Outcome | undefined;
    let watchdog: NodeJS.Timeout | undefined;
    child.on("message", (message) => {
      outcome = message as Outcome;
      watchdog = setTimeout(() => child.kill("SIGKILL"), CHILD_EXIT_GRACE_MS);
    });
    child.on("exit", (code, signal) => {
      clearTimeout(watchdog);
      if (signal === "SIGKILL" && outcome) {
        resolve({
          ok: false,
          error: `did not exit within ${CHILD_EXIT_GRACE_MS} ms of reporting (a handle was left open)`,
        });
      } else if (!outcome) {
        resolve({ ok: false, error: `exited (${signal ?? `code ${code}`}) without reporting` });
      } else resolve(outcome);
    });
  });
}

async function main(args: readonly string[]): Promise<number> {
  const child = args.indexOf("--child");
  if (child !== -1) {
    if (!process.send) throw new Error("--child is for run.ts's own child processes");
    return runChild(args[child + 1] ?? "");
  }
  const rows: Row[] = [];
  const produced: Figures = {};
  const failed: string[] = [];
  for (const name of selectedNames(args)) {
    const started = performance.now();
    console.error(`bench: ${name} …`);
    const outcome = await runInChild(name);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (!outcome.ok) {
      console.error(`bench: ${name} FAILED after ${seconds} s\n${outcome.error}`);
      failed.push(name);
      continue;
    }
    console.error(`bench: ${name} done in ${seconds} s`);
    for (const [figure, value] of Object.entries(outcome.figures)) {
      rows.push({ figure, value, notes: outcome.notes[figure] });
      produced[figure] = value;
    }
  }
  if (rows.length > 0) {
    console.log(formatTable(rows));
    mergeResults(RESULTS_FILE, produced);
    console.error(
      `bench: merged ${rows.length} figures into ${path.relative(process.cwd(), RESULTS_FILE)}`,
    );
  }
  if (failed.length > 0) console.error(`bench: failed: ${failed.join(", ")}`);
  return failed.length > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 2;
  },
);
