import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import type { Benchmark, Figures } from "./benchmark";
import { configureFold } from "./fold-env";
import { percentile, round1 } from "./measure";
import { identifiersIn, mean } from "./sim-metrics";
import { startPageServer } from "./sim-pages";
import { buildPlan, IDENTIFIERS, type PageSpec, SIM_TURNS } from "./sim-plan";

/**
 * `sim`: a simulated 1,000-turn conversation through Fold's real turn path — POST /api/chat
 * called in-process, a real migrated database, the fake OpenAI-compatible server with an
 * 8,192-token window answering both the chat and the summarizer. User messages of 10–400
 * words, replies of 20–300 tokens, about one turn in six fetching a local page of 200 B to
 * 40 kB through the real fetch_url tool, and 30 identifiers planted along the way. Reports
 * whether every turn succeeded, whether any request overflowed, how compaction behaved, and
 * how many of the identifiers the model still sees at the end.
 */

const PROVIDER = "fake";
const MODEL = "sim";
const WINDOW_TOKENS = 8_192;
/**
 * Characters per streamed reply chunk (the fake server's default is 8): fewer chunks keep
 * 1,000 turns of streaming cheap on a 2-core machine; token counts do not depend on it.
 */
const CHUNK_CHARS = 64;
/** How long after cleanup an open handle is reported (run.ts kills the child at 10 s). */
const LEAK_REPORT_MS = 5_000;
/** Failures and overflows printed in full to stderr; the table gets the first one. */
const DETAILS_PRINTED = 20;

export const benchmark: Benchmark = {
  name: "sim",
  async run(context) {
    const started = performance.now();
    // SIM_TURNS shortens the run while working on this module; the figures assume 1,000.
    const plan = buildPlan(Number(process.env.SIM_TURNS) || SIM_TURNS);
    const pages = await startPageServer(
      plan.flatMap((turn) => (turn.page ? [turn.page] : [])) satisfies PageSpec[],
    );
    const fake = await startFakeOpenAI({
      models: [{ id: MODEL, maxModelLen: WINDOW_TOKENS }],
      chunkDelayMs: 0,
      chunkChars: CHUNK_CHARS,
    });
    try {
      configureFold(fake.url, PROVIDER, { FETCH_URL_ALLOW_PRIVATE: "1" });
      const { openBenchDatabase } = await import("./database");
      const bench = await openBenchDatabase();
      try {
        const { runSimulation } = await import("./sim-run");
        const raw = await runSimulation({
          database: bench.database,
          fake,
          pages,
          plan,
          modelId: `${PROVIDER}:${MODEL}`,
          log: (line) => console.error(line),
        });
        const seconds = (performance.now() - started) / 1000;

        for (const failed of raw.failed.slice(0, DETAILS_PRINTED)) {
          console.error(`sim: turn ${failed.turn} failed: ${failed.detail}`);
        }
        for (const recovered of raw.recovered.slice(0, DETAILS_PRINTED)) {
          console.error(`sim: recovered ${recovered}`);
        }
        for (const overflow of raw.overflowRequests.slice(0, DETAILS_PRINTED)) {
          console.error(
            `sim: turn ${overflow.turn} overflowed: ${overflow.detail}\n    ${overflow.context}`,
          );
        }

        const folded = raw.events.filter(
          (e) => e.outcome === "summarized" || e.outcome === "fallback",
        );
        const fillAfter = folded.map((e) => ((e.tokensAfter ?? 0) / WINDOW_TOKENS) * 100);
        const kept = identifiersIn(raw.finalRequestText, IDENTIFIERS);
        const lost = IDENTIFIERS.filter((id) => !kept.includes(id));
        if (lost.length > 0) {
          console.error(
            `sim: identifiers missing from the final request: ${lost.map((id) => id.value).join(" | ")}`,
          );
        }
        const figures: Figures = {
          "sim.turns": raw.turns,
          "sim.failed_turns": raw.failed.length,
          "sim.overflow_errors": raw.overflowRequests.length,
          "sim.compactions": folded.length,
          "sim.summarizer_input_ratio":
            raw.conversationTokens > 0
              ? Math.round((raw.summarizerSpanTokens / raw.conversationTokens) * 1000) / 1000
              : 0,
          "sim.summarizer_input_ratio_pruned":
            raw.serializedOnceTokens > 0
              ? Math.round((raw.summarizerSpanTokens / raw.serializedOnceTokens) * 1000) / 1000
              : 0,
          "sim.fill_after_mean_pct": fillAfter.length ? round1(mean(fillAfter)) : 0,
          "sim.fill_after_p95_pct": fillAfter.length ? round1(percentile(fillAfter, 95)) : 0,
          "sim.identifiers_kept_pct": round1((kept.length / IDENTIFIERS.length) * 100),
          "sim.fallbacks": raw.events.filter((e) => e.outcome === "fallback").length,
          "sim.skipped": raw.events.filter((e) => e.outcome === "skipped").length,
          "sim.summarizer_resent_turns": raw.resentTurns,
          "sim.hard_wall_turns": raw.hardWallTurns,
          "sim.recovered_turns": raw.recovered.length,
          "sim.first_steps_over_trigger": raw.firstStepsOverTrigger,
          "sim.first_steps_over_budget": raw.firstStepsOverBudget,
          "sim.over_trigger_after_trim": raw.overTriggerAfterShrink,
          "sim.shrunk_step_turns": raw.shrunkStepTurns,
          "sim.max_prompt_tokens": raw.maxChatPromptTokens,
          "sim.seconds": round1(seconds),
        };

        const toolText = raw.toolOutputChars;
        context.note(
          "sim.turns",
          `${bench.label}; ${raw.toolTurns} fetch_url turns (${toolText.length ? `${Math.min(...toolText)}–${Math.max(...toolText)}` : "no"} chars of text); ${raw.storedMessages} stored messages`,
        );
        context.note(
          "sim.failed_turns",
          raw.failed[0]
            ? `SSE error chunk or no stored reply; first: turn ${raw.failed[0].turn}: ${raw.failed[0].detail.slice(0, 160)}`
            : "SSE error chunk or no stored reply",
        );
        context.note(
          "sim.overflow_errors",
          raw.overflowRequests[0]
            ? `fake server 400s; first: turn ${raw.overflowRequests[0].turn} (${raw.overflowRequests[0].detail})`
            : "fake server 400s (context overflow)",
        );
        context.note("sim.compactions", "compaction_event rows, outcome summarized or fallback");
        context.note(
          "sim.summarizer_input_ratio",
          `span tokens sent to the summarizer (${raw.summarizerSpanTokens} in ${raw.summarizerRequests} calls) ÷ stored content tokens (${raw.conversationTokens}); tool outputs are cut to ~2,000 chars for it`,
        );
        context.note(
          "sim.summarizer_input_ratio_pruned",
          `the same span tokens ÷ every stored message serialized once as Stage 1 prunes it (${raw.serializedOnceTokens}); 1 = each message sent exactly once`,
        );
        context.note("sim.fill_after_mean_pct", `tokens_after ÷ ${WINDOW_TOKENS}`);
        context.note("sim.fill_after_p95_pct", `tokens_after ÷ ${WINDOW_TOKENS}`);
        context.note(
          "sim.identifiers_kept_pct",
          `${kept.length} of ${IDENTIFIERS.length} as exact substrings of the final turn's chat request (${raw.finalPromptTokens} prompt tokens)${lost.length ? `; lost kinds: ${[...new Set(lost.map((id) => id.kind))].join(", ")}` : ""}`,
        );
        context.note(
          "sim.summarizer_resent_turns",
          "user turns sent to the summarizer more than once",
        );
        context.note(
          "sim.recovered_turns",
          "turns whose stream carried a trimmed trace (recovery retried a rejected request)",
        );
        context.note(
          "sim.first_steps_over_trigger",
          `turns whose first chat request (the one Tier 1 sized) was above the budget's trigger (${raw.trigger} tokens; a chat whose pinned and latest user messages keep every fold over the target folds later, by design: foldTrigger)`,
        );
        context.note(
          "sim.first_steps_over_budget",
          `…and above the input budget (${raw.inputBudget} tokens)`,
        );
        context.note(
          "sim.over_trigger_after_trim",
          "first steps over the trigger whose previous turn was trimmed in memory (its stored contextTokens describe the trimmed request)",
        );
        context.note(
          "sim.shrunk_step_turns",
          "turns where a later step's prompt was smaller than the previous step's (Tier 2 trimmed it in memory)",
        );
        context.note("sim.hard_wall_turns", "stored replies whose view used a hard-wall cap");
        context.note(
          "sim.max_prompt_tokens",
          `largest accepted chat prompt (window ${WINDOW_TOKENS})`,
        );
        context.note(
          "sim.skipped",
          "compaction_event rows with outcome skipped (recovery records its trims this way too)",
        );
        context.note("sim.seconds", "wall time of the whole module");
        return figures;
      } finally {
        await bench.dispose();
      }
    } finally {
      await fake.close();
      await pages.close();
      // Fires only if something still holds the process open: names it before run.ts kills us.
      setTimeout(() => {
        console.error(
          `sim: still open after cleanup: ${process.getActiveResourcesInfo().join(", ")}`,
        );
      }, LEAK_REPORT_MS).unref();
    }
  },
};
