import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import type { Benchmark, Figures } from "./benchmark";
import { configureFold } from "./fold-env";
import { round1 } from "./measure";
import { MAX_SCALE, MIN_SCALE, SkewObserver, skewSequence } from "./recovery-skew";
import { identifiersIn } from "./sim-metrics";
import { startPageServer } from "./sim-pages";
import { buildPlan, IDENTIFIERS, type PageSpec, SIM_TURNS } from "./sim-plan";

/**
 * `recovery`: how Fold copes when its token counts are wrong, and inside one long tool loop.
 * 1. `sim_skew`: the `sim` benchmark's 1,000-turn conversation through the real turn path,
 *    with the fake server's token count skewed by a fresh seeded factor in [0.8, 1.2] every
 *    turn, so calibration never catches up. Recovery (DESIGN §10) must absorb every surprise.
 * 2. `toolloop`: one user message, a model scripted to call fetch_url 49 times on ~20 kB pages
 *    and then answer, against an 8,192-token window: through POST /api/chat, and (the
 *    `uncapped_` figures) through the turn's own model-call wiring (`streamModelCall`: Tier 2 +
 *    recovery), with all 50 steps allowed.
 * 3. `tier2`: CPU of the Tier 2 prepareStep hook per step, replayed on the 50-step loop.
 */

const PROVIDER = "fake";
const SIM_MODEL = "sim";
const LOOP_MODEL = "loop";
const WINDOW_TOKENS = 8_192;
/** As in `sim`: fewer streamed chunks keep 1,000 turns cheap; token counts do not depend on it. */
const CHUNK_CHARS = 64;
/** The tool loop: this many model calls, all but the last fetching a page of LOOP_PAGE_BYTES. */
const LOOP_STEPS = 50;
const LOOP_FETCHES = LOOP_STEPS - 1;
const LOOP_PAGE_BYTES = 20_000;
const LEAK_REPORT_MS = 5_000;
const DETAILS_PRINTED = 20;

function loopPages(count: number): PageSpec[] {
  return Array.from({ length: count }, (_, i) => ({
    path: `/loop/${i + 1}.txt`,
    kind: "text" as const,
    bytes: LOOP_PAGE_BYTES,
    seed: 0x1007_0000 + i,
  }));
}

const pct = (tokens: number) => round1((tokens / WINDOW_TOKENS) * 100);

export const benchmark: Benchmark = {
  name: "recovery",
  async run(context) {
    const started = performance.now();
    // SIM_TURNS shortens the run while working on this module; the figures assume 1,000.
    const plan = buildPlan(Number(process.env.SIM_TURNS) || SIM_TURNS);
    const scales = skewSequence(plan.length);
    const loopSpecs = loopPages(LOOP_FETCHES);
    const pages = await startPageServer([
      ...plan.flatMap((turn) => (turn.page ? [turn.page] : [])),
      ...loopSpecs,
    ]);
    const fake = await startFakeOpenAI({
      models: [
        { id: SIM_MODEL, maxModelLen: WINDOW_TOKENS },
        // The tool loops run unskewed: their figures are about Tier 2, not calibration.
        { id: LOOP_MODEL, maxModelLen: WINDOW_TOKENS, tokenScale: 1 },
      ],
      chunkDelayMs: 0,
      chunkChars: CHUNK_CHARS,
    });
    try {
      configureFold(fake.url, PROVIDER, { FETCH_URL_ALLOW_PRIVATE: "1" });
      const { openBenchDatabase } = await import("./database");
      const bench = await openBenchDatabase();
      try {
        const figures: Figures = {};
        const urls = loopSpecs.map((spec) => `${pages.origin}${spec.path}`);
        const loopModelId = `${PROVIDER}:${LOOP_MODEL}`;

        // 2. The tool loop through the real turn path, then uncapped.
        const { newestResultTokens, replayHookCost, runRouteLoop, runUncappedLoop } = await import(
          "./recovery-loop"
        );
        const route = await runRouteLoop({
          database: bench.database,
          fake,
          urls,
          modelId: loopModelId,
        });
        const uncapped = await runUncappedLoop({
          database: bench.database,
          fake,
          urls,
          modelId: loopModelId,
        });
        // 3. The hook's CPU, replayed on the uncapped loop's recorded steps.
        const cost = replayHookCost(uncapped);
        const loopSeconds = (performance.now() - started) / 1000;
        console.error(
          `recovery: tool loops done in ${loopSeconds.toFixed(1)} s; route: ${route.steps} steps, finish ${route.finishReason}, ${route.requests.overflows} overflows${route.error ? `, error ${route.error}` : ""}; uncapped: ${uncapped.steps} steps, finish ${uncapped.finishReason}, ${uncapped.requests.overflows} overflows${uncapped.error ? `, error ${uncapped.error}` : ""}`,
        );
        console.error(
          `recovery: uncapped newest tool result per step (tokens): ${newestResultTokens(uncapped.requests.accepted).join(" ")}`,
        );
        console.error(
          `recovery: uncapped prompts per step: ${uncapped.requests.chat.map((r) => `${r.promptTokens}${r.status === 200 ? "" : `(${r.status})`}`).join(" ")}`,
        );

        // The first result reaches the model whole (step 2 is under the trigger); later steps
        // may cut even the newest one to fit Tier 2's target.
        const wholeResult = route.newestResultTokens[0] ?? 0;
        const uncappedNewest = newestResultTokens(uncapped.requests.accepted);
        Object.assign(figures, {
          "toolloop.completed": route.completed ? 1 : 0,
          "toolloop.steps": route.steps,
          "toolloop.fetches": route.fetches,
          "toolloop.answered": route.answered ? 1 : 0,
          "toolloop.peak_fill_pct": pct(route.requests.peakAcceptedPrompt),
          "toolloop.overflow_errors": route.requests.overflows,
          "toolloop.uncapped_steps": uncapped.steps,
          "toolloop.uncapped_answered": uncapped.answered ? 1 : 0,
          "toolloop.uncapped_peak_fill_pct": pct(uncapped.requests.peakAcceptedPrompt),
          "toolloop.uncapped_overflow_errors": uncapped.requests.overflows,
          "toolloop.uncapped_tier2_trims": uncapped.trims,
          "toolloop.result_tokens": wholeResult,
          "toolloop.uncapped_newest_result_min_tokens": Math.min(...uncappedNewest.slice(1)),
          "tier2.cpu_ms_per_step": Math.round(cost.perStepMs * 1000) / 1000,
          "tier2.under_trigger_cpu_ms": Math.round(cost.underTriggerMs * 1000) / 1000,
          "tier2.trimming_step_cpu_ms": Math.round(cost.trimmingMs * 1000) / 1000,
        } satisfies Figures);
        context.note(
          "toolloop.completed",
          `POST /api/chat in-process, ${bench.label}; stored reply and no error chunk; ${LOOP_FETCHES} fetch_url calls scripted, each a ${LOOP_PAGE_BYTES.toLocaleString("en-US")} B text page`,
        );
        context.note(
          "toolloop.steps",
          `model calls in the stored reply (finish reason ${route.finishReason ?? "none"}); the turn's own step limit (TURN_MAX_STEPS) applies`,
        );
        context.note("toolloop.fetches", `fetch_url results streamed, of ${LOOP_FETCHES} scripted`);
        context.note(
          "toolloop.answered",
          "1 when the scripted final answer arrived after the last fetch",
        );
        context.note(
          "toolloop.peak_fill_pct",
          `max accepted chat prompt ÷ ${WINDOW_TOKENS} (${route.requests.peakAcceptedPrompt} tokens; per step: ${route.requests.chat.map((r) => r.promptTokens).join(" ")}); ${route.trimmedTraces} recovery traces`,
        );
        context.note(
          "toolloop.uncapped_steps",
          `streamModelCall (the turn's Tier 2 + recovery wiring) with maxSteps ${LOOP_STEPS} (ratio ${uncapped.model.ratio.toFixed(3)}, trigger ${uncapped.model.budget.trigger}, target ${uncapped.model.budget.target}); finish ${uncapped.finishReason ?? "none"}${uncapped.error ? `; error: ${uncapped.error.slice(0, 120)}` : ""}`,
        );
        context.note(
          "toolloop.uncapped_peak_fill_pct",
          `max accepted prompt ÷ ${WINDOW_TOKENS} (${uncapped.requests.peakAcceptedPrompt} tokens)`,
        );
        context.note(
          "toolloop.uncapped_overflow_errors",
          `fake-server 400s; ${uncapped.recoveries.length} recovery retries`,
        );
        context.note("toolloop.uncapped_tier2_trims", "prepareStep calls where Tier 2 trimmed");
        context.note(
          "toolloop.result_tokens",
          "one fetch_url result as the model first gets it, whole (the fake server's count of the tool message)",
        );
        context.note(
          "toolloop.uncapped_newest_result_min_tokens",
          `smallest the newest tool result got, over steps 3–${uncapped.steps}, after Tier 2's cuts (median ${uncappedNewest.length > 1 ? [...uncappedNewest.slice(1)].sort((a, b) => a - b)[Math.floor((uncappedNewest.length - 1) / 2)] : 0})`,
        );
        context.note(
          "tier2.cpu_ms_per_step",
          `ms; process.cpuUsage around createTier2's hook, mean over all ${uncapped.records.length} prepareStep calls of the uncapped loop, replayed on its recorded inputs with a cold estimator each time (median of ${cost.replays} replays); in the live run with the warm shared estimator: ${(uncapped.inRunCpuMs.reduce((a, b) => a + b, 0) / Math.max(1, uncapped.inRunCpuMs.length)).toFixed(3)} ms`,
        );
        context.note(
          "tier2.under_trigger_cpu_ms",
          `mean over ${cost.underTriggerSteps} steps that projected under the trigger (${cost.stalledSteps} steps skipped after a stalled trim)`,
        );
        context.note(
          "tier2.trimming_step_cpu_ms",
          `mean over ${cost.trimmingSteps} steps that trimmed (elide, then the cap ladder)`,
        );

        // 1. The skewed 1,000-turn simulation.
        const observer = new SkewObserver(scales);
        const { runSimulation } = await import("./sim-run");
        const simStarted = performance.now();
        const raw = await runSimulation({
          database: bench.database,
          fake,
          pages,
          plan,
          modelId: `${PROVIDER}:${SIM_MODEL}`,
          log: (line) => console.error(line.replace(/^sim:/, "recovery sim_skew:")),
          beforeTurn: (turn) => fake.configure({ tokenScale: observer.scaleOf(turn.index) }),
          afterTurn: (observed) => observer.observe(observed),
        });
        const simSeconds = (performance.now() - simStarted) / 1000;

        const recovered = observer.recoveredTurns();
        const failed = observer.turns.filter((t) => t.failed);
        for (const turn of failed.slice(0, DETAILS_PRINTED))
          console.error(`recovery: FAILED ${turn.describe}`);
        for (const turn of recovered.slice(0, DETAILS_PRINTED))
          console.error(`recovery: recovered ${turn.describe}`);
        for (const turn of observer.turns.filter(
          (t) => (t.firstPromptTokens ?? 0) > raw.inputBudget,
        ))
          console.error(`recovery: first request over the input budget: ${turn.describe}`);
        const worst = [...observer.turns]
          .filter((t) => t.firstPromptTokens !== null && t.estimatedTokens)
          .sort(
            (a, b) =>
              (b.firstPromptTokens ?? 0) / (b.estimatedTokens ?? 1) -
              (a.firstPromptTokens ?? 0) / (a.estimatedTokens ?? 1),
          );
        for (const turn of worst.slice(0, 3))
          console.error(
            `recovery: underestimated ${turn.firstPromptTokens} vs estimate ${turn.estimatedTokens}: ${turn.describe}`,
          );
        const folded = raw.events.filter(
          (e) => e.outcome === "summarized" || e.outcome === "fallback",
        );
        const kept = identifiersIn(raw.finalRequestText, IDENTIFIERS);
        const chatOverflows = observer.sum((t) => t.chatOverflows);
        const lengthRetries = observer.sum((t) => t.trimmedLength);
        const realized = observer.turns.flatMap((t) =>
          t.realizedScale === null ? [] : [t.realizedScale],
        );
        const misses = observer.estimateRatios();
        const maxPrompt = Math.max(...observer.turns.map((t) => t.maxAcceptedPrompt));

        Object.assign(figures, {
          "sim_skew.turns": raw.turns,
          "sim_skew.failed_turns": failed.length,
          "sim_skew.recoveries": recovered.length,
          "sim_skew.extra_provider_calls": observer.extraProviderCalls(),
          "sim_skew.chat_requests_beyond_steps": observer.chatRequestsBeyondSteps(),
          "sim_skew.overflow_errors": chatOverflows,
          "sim_skew.summarizer_overflow_errors": observer.sum((t) => t.summarizerOverflows),
          "sim_skew.length_retries": lengthRetries,
          "sim_skew.compactions": folded.length,
          "sim_skew.fallbacks": raw.events.filter((e) => e.outcome === "fallback").length,
          "sim_skew.hard_wall_turns": raw.hardWallTurns,
          "sim_skew.identifiers_kept_pct": round1((kept.length / IDENTIFIERS.length) * 100),
          "sim_skew.max_prompt_tokens": raw.maxChatPromptTokens,
          "sim_skew.max_fill_pct": pct(maxPrompt),
          "sim_skew.max_underestimate_pct": round1((Math.max(...misses) - 1) * 100),
          "sim_skew.max_overestimate_pct": round1((1 - Math.min(...misses)) * 100),
          "sim_skew.first_steps_over_budget": raw.firstStepsOverBudget,
          "sim_skew.seconds": round1(simSeconds),
          "recovery.seconds": round1((performance.now() - started) / 1000),
        } satisfies Figures);
        context.note(
          "sim_skew.turns",
          `sim's plan; fake-server tokenScale redrawn every turn, uniform in [${MIN_SCALE}, ${MAX_SCALE}] (seeded), chat and summarizer alike; the fake server's count ÷ its unscaled count, first chat request of each turn: ${Math.min(...realized).toFixed(3)}–${Math.max(...realized).toFixed(3)}`,
        );
        context.note(
          "sim_skew.failed_turns",
          failed[0]
            ? `SSE error chunk or no stored reply; first: ${failed[0].describe.slice(0, 200)}`
            : "SSE error chunk or no stored reply",
        );
        context.note(
          "sim_skew.recoveries",
          `turns with a "trimmed" compact_context trace, or a fake-server 400 the turn still answered (${observer.sum((t) => t.trimmedOverflow)} overflow traces, ${lengthRetries} length traces)`,
        );
        context.note(
          "sim_skew.extra_provider_calls",
          `chat overflow 400s (${chatOverflows}) + length retries (${lengthRetries})`,
        );
        context.note(
          "sim_skew.chat_requests_beyond_steps",
          "exact count: chat requests minus the stored reply's steps, over answered turns",
        );
        context.note("sim_skew.overflow_errors", "chat requests the fake server answered 400");
        context.note(
          "sim_skew.summarizer_overflow_errors",
          "summarizer requests answered 400 (the summarizer halves its chunk and retries)",
        );
        context.note(
          "sim_skew.compactions",
          "compaction_event rows, outcome summarized or fallback",
        );
        context.note(
          "sim_skew.identifiers_kept_pct",
          `${kept.length} of ${IDENTIFIERS.length} planted identifiers as exact substrings of the final turn's accepted chat request`,
        );
        context.note(
          "sim_skew.max_prompt_tokens",
          `largest accepted chat prompt (window ${WINDOW_TOKENS})`,
        );
        context.note("sim_skew.max_fill_pct", `largest accepted chat prompt ÷ ${WINDOW_TOKENS}`);
        context.note(
          "sim_skew.max_underestimate_pct",
          `worst real ÷ Fold's calibrated estimate − 1, first chat request of a turn (${misses.length} turns; ${misses.filter((m) => m > 1.1).length} above 10 %)`,
        );
        context.note(
          "sim_skew.max_overestimate_pct",
          "worst 1 − real ÷ calibrated estimate, same requests",
        );
        context.note(
          "sim_skew.first_steps_over_budget",
          `turns whose first chat request exceeded the input budget (${raw.inputBudget} tokens)`,
        );
        context.note("recovery.seconds", "wall time of the whole module");
        return figures;
      } finally {
        await bench.dispose();
      }
    } finally {
      await fake.close();
      await pages.close();
      setTimeout(() => {
        console.error(
          `recovery: still open after cleanup: ${process.getActiveResourcesInfo().join(", ")}`,
        );
      }, LEAK_REPORT_MS).unref();
    }
  },
};
