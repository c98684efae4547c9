import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import type { FakeOpenAI, SummarizerMode } from "../fixtures/fake-openai/types";
import type { Benchmark, Figures } from "./benchmark";
import { writeNotes } from "./memory-notes";
import { startMemoryPages } from "./memory-pages";
import { buildMemoryPlan, MEMORY_TURNS } from "./memory-plan";
import type { VariantRaw } from "./memory-run";
import { byOrigin, keptPct, mentioned, requestText, type Tally, tally } from "./memory-score";

/**
 * `memory` (issue 10, parts a–c): what the model still sees of 40 planted facts at the end of
 * a 300-turn chat through Fold's real turn path — POST /api/chat in-process, a real migrated
 * database, and the fake OpenAI-compatible server acting as an extractive summarizer whose
 * replies are cut at max_tokens like a real model's. A fetch_url call every fifth turn reads
 * a page full of competing identifiers. Four chats, each against a fake server of its own:
 * (a) 8,192 tokens, (b) 4,096, and (a) with a summarizer that drops every identifier or that
 * fails every third call. Reports what Fold does today; nothing here is tuned to it.
 */

/** Each variant's fake server serves this one model, with the variant's window. */
const MODEL = "fold-memory";
const AUTH_SECRET = "bench-secret-bench-secret-bench-secret-0123";
/** As in `sim`: fewer streamed chunks keep hundreds of turns cheap; counts do not depend on it. */
const CHUNK_CHARS = 64;
/** (c)'s failing summarizer: every third call answers HTTP 500. */
const FAIL_EVERY_CALLS = 3;
/** How long after cleanup an open handle is reported (run.ts kills the child at 10 s). */
const LEAK_REPORT_MS = 5_000;
/** Failed turns printed in full to stderr per chat; the notes carry the counts. */
const DETAILS_PRINTED = 10;

type Variant = {
  key: "a" | "b" | "lossy" | "failing";
  /** Fold's provider name for this variant's fake server (OPENAI_COMPATIBLE_<n>_NAME). */
  provider: string;
  windowTokens: number;
  summarizer: SummarizerMode;
  failEvery: number;
  label: string;
};

const VARIANTS: readonly Variant[] = [
  {
    key: "a",
    provider: "memory-a",
    windowTokens: 8_192,
    summarizer: "extractive",
    failEvery: 0,
    label: "(a) 8,192, extractive",
  },
  {
    key: "b",
    provider: "memory-b",
    windowTokens: 4_096,
    summarizer: "extractive",
    failEvery: 0,
    label: "(b) 4,096, extractive",
  },
  {
    key: "lossy",
    provider: "memory-lossy",
    windowTokens: 8_192,
    summarizer: "lossy",
    failEvery: 0,
    label: "(c) 8,192, lossy",
  },
  {
    key: "failing",
    provider: "memory-failing",
    windowTokens: 8_192,
    summarizer: "extractive",
    failEvery: FAIL_EVERY_CALLS,
    label: "(c) 8,192, failing every 3rd call",
  },
];

/** One OpenAI-compatible server per variant: `OPENAI_COMPATIBLE_*`, then `_2_*`, `_3_*`, … */
function configureFold(servers: ReadonlyArray<{ variant: Variant; fake: FakeOpenAI }>): void {
  for (const [i, { variant, fake }] of servers.entries()) {
    const prefix = i === 0 ? "OPENAI_COMPATIBLE_" : `OPENAI_COMPATIBLE_${i + 1}_`;
    process.env[`${prefix}BASE_URL`] = fake.url;
    process.env[`${prefix}NAME`] = variant.provider;
  }
  process.env.DEMO_MODEL = "never";
  process.env.LOG_LEVEL = "silent";
  process.env.BETTER_AUTH_SECRET = AUTH_SECRET;
  process.env.FETCH_URL_ALLOW_PRIVATE = "true";
}

function sum(results: readonly VariantRaw[], pick: (r: VariantRaw) => number): number {
  return results.reduce((total, r) => total + pick(r), 0);
}

export const benchmark: Benchmark = {
  name: "memory",
  async run(context) {
    const started = performance.now();
    // MEMORY_TURNS shortens the run while working on this module; the figures assume 300.
    const plan = buildMemoryPlan(Number(process.env.MEMORY_TURNS) || MEMORY_TURNS);
    const pages = await startMemoryPages(plan.pages);
    const servers = await Promise.all(
      VARIANTS.map(async (variant) => ({
        variant,
        fake: await startFakeOpenAI({
          models: [{ id: MODEL, maxModelLen: variant.windowTokens }],
          chunkChars: CHUNK_CHARS,
          summarizer: variant.summarizer,
          summarizerFailEvery: variant.failEvery,
          // Turns are scripted ahead; a compaction must not take the chat's scripted reply.
          scriptSummarizer: false,
        }),
      })),
    );
    try {
      configureFold(servers);
      const { openBenchDatabase } = await import("./database");
      const { runVariant } = await import("./memory-run");
      const bench = await openBenchDatabase();
      try {
        const raws = new Map<Variant["key"], VariantRaw>();
        for (const { variant, fake } of servers) {
          const raw = await runVariant({
            database: bench.database,
            fake,
            pageOrigin: pages.origin,
            turns: plan.turns,
            modelId: `${variant.provider}:${MODEL}`,
            email: `memory-${variant.key}@example.com`,
            log: (line) => console.error(`memory: ${line}`),
          });
          raws.set(variant.key, raw);
          console.error(`memory: ${variant.label} done in ${raw.seconds.toFixed(1)} s`);
        }
        const all = [...raws.values()];
        const get = (key: Variant["key"]) => raws.get(key) as VariantRaw;
        const score = (key: Variant["key"], facts = plan.facts): Tally =>
          tally(facts, requestText(get(key).finalRequest));

        const facts = plan.facts;
        const a = {
          user: score("a", byOrigin(facts, "user")),
          assistant: score("a", byOrigin(facts, "assistant")),
          mentioned: score("a", mentioned(facts)),
          toolArgs: score("a", byOrigin(facts, "tool_args")),
          toolResults: score("a", byOrigin(facts, "tool_results")),
        };
        const b = score("b", byOrigin(facts, "user"));
        const lossy = score("lossy", byOrigin(facts, "user"));
        const failing = score("failing", byOrigin(facts, "user"));
        for (const { variant } of servers) {
          const lost = score(variant.key).lost;
          if (lost.length > 0) {
            console.error(
              `memory: ${variant.label} lost ${lost.length} of ${facts.length}: ${lost.map((f) => `${f.origin}:${f.value}`).join(" | ")}`,
            );
          }
          for (const failed of get(variant.key).failed.slice(0, DETAILS_PRINTED)) {
            console.error(`memory: ${variant.label} turn ${failed.turn} failed: ${failed.detail}`);
          }
        }

        const figures: Figures = {
          "memory.user_kept_pct": keptPct(a.user),
          "memory.assistant_kept_pct": keptPct(a.assistant),
          "memory.mentioned_kept_pct": keptPct(a.mentioned),
          "memory.tool_args_kept_pct": keptPct(a.toolArgs),
          "memory.tool_results_kept_pct": keptPct(a.toolResults),
          "memory.kept_4k_user_pct": keptPct(b),
          "memory.lossy_user_kept_pct": keptPct(lossy),
          "memory.failing_user_kept_pct": keptPct(failing),
          "memory.fallbacks": sum(all, (r) => r.outcomes.fallback ?? 0),
          "memory.summaries_cut": sum(all, (r) => r.summariesCut),
          "memory.failed_turns": sum(all, (r) => r.failed.length),
        };

        writeNotes(context, {
          plan,
          label: bench.label,
          seconds: (performance.now() - started) / 1000,
          variants: servers.map(({ variant }) => ({
            label: variant.label,
            key: variant.key,
            raw: get(variant.key),
          })),
          a,
          b,
          lossy,
          failing,
        });
        return figures;
      } finally {
        await bench.dispose();
      }
    } finally {
      await Promise.all(servers.map(({ fake }) => fake.close()));
      await pages.close();
      // Fires only if something still holds the process open: names it before run.ts kills us.
      setTimeout(() => {
        console.error(
          `memory: still open after cleanup: ${process.getActiveResourcesInfo().join(", ")}`,
        );
      }, LEAK_REPORT_MS).unref();
    }
  },
};
