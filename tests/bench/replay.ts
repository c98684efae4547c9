import path from "node:path";
import { fileURLToPath } from "node:url";
import { tool } from "ai";
import { z } from "zod";
import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import type { Benchmark, Figures } from "./benchmark";
import { configureFold } from "./fold-env";
import { percentile, round1 } from "./measure";
import { loadCorpus, plannedCalls, resolveCorpusPath } from "./replay-corpus";
import { ORIGINS, type Origin, SAMPLE_PER_ORIGIN } from "./replay-identifiers";
import type { RecallTally } from "./replay-recall";
import type { ReplayedConversation } from "./replay-run";
import { pct, scoreCompactions, scoreKept } from "./replay-score";

/**
 * `replay`: real agent conversations (../shared/corpus/conversations.jsonl, or the file in
 * `REPLAY_CORPUS`) replayed through Fold's turn pipeline at an 8,192-token window against the
 * fake OpenAI-compatible server, which also summarizes (extractively, cut at max_tokens). Each
 * conversation starts in a new empty chat; every assistant turn is one model call, after
 * which the corpus's own turn is stored in place of Fold's reply. Reports refusals and
 * failures, which identifiers the model still saw at the end, and how compaction behaved.
 *
 * Options (environment): `REPLAY_CORPUS` a corpus file; `REPLAY_LIMIT` replay only the first
 * n conversations; `REPLAY_USAGE=drop` store each corpus turn without the usage stats of Fold's reply
 * (by default they are kept, as on every reply a live chat stores: the stats of the call that
 * produced it, including the hard-wall cap that call's view used).
 */

const PROVIDER = "fake";
const MODEL = "small";
const WINDOW_TOKENS = 8_192;
/** Characters per streamed chunk: the replies are discarded, so fewer chunks is cheaper. */
const CHUNK_CHARS = 256;
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** Refused or failed calls printed in full to stderr; the table gets the first of each. */
const DETAILS_PRINTED = 10;
/** How long after cleanup an open handle is reported (run.ts kills the child at 10 s). */
const LEAK_REPORT_MS = 5_000;

/** The original agent's one tool: the request carries its schema; the replay never runs it. */
const replayTools = {
  bash: tool({
    description: "Run one bash command in the task's working directory and return its output.",
    inputSchema: z.object({ command: z.string() }),
    execute: async () => "bash is not available in a replay",
  }),
};

const ORIGIN_WORDS: Record<Origin, string> = {
  user: "user text",
  assistant: "assistant text",
  tool_args: "tool-call arguments",
  tool_results: "tool results",
};

export const benchmark: Benchmark = {
  name: "replay",
  async run(context) {
    const started = performance.now();
    const corpusPath = resolveCorpusPath(process.env.REPLAY_CORPUS, REPO_ROOT);
    const corpus = loadCorpus(corpusPath);
    const limit = Number(process.env.REPLAY_LIMIT) || corpus.length;
    const conversations = corpus.slice(0, limit);
    const keepUsage = process.env.REPLAY_USAGE !== "drop";
    const fake = await startFakeOpenAI({
      models: [{ id: MODEL, maxModelLen: WINDOW_TOKENS }],
      chunkDelayMs: 0,
      chunkChars: CHUNK_CHARS,
      summarizer: "extractive",
    });
    try {
      configureFold(fake.url, PROVIDER, { TURN_MAX_STEPS: "250" });
      const { openBenchDatabase } = await import("./database");
      const { replayConversation } = await import("./replay-run");
      const bench = await openBenchDatabase();
      const runs: ReplayedConversation[] = [];
      let recalled: Record<Origin, RecallTally>;
      try {
        for (const conversation of conversations) {
          runs.push(
            await replayConversation({
              database: bench.database,
              fake,
              conversation,
              modelId: `${PROVIDER}:${MODEL}`,
              tools: replayTools,
              keepUsage,
              log: (line) => console.error(line),
            }),
          );
        }
        const { scoreRecall } = await import("./replay-recall");
        recalled = await scoreRecall(
          bench.database.db,
          conversations,
          runs,
          `${PROVIDER}:${MODEL}`,
          replayTools,
        );
      } finally {
        await bench.dispose();
      }
      const seconds = (performance.now() - started) / 1000;

      const calls = runs.flatMap((r) => r.calls.map((c) => ({ ...c, conversation: r.id })));
      const refused = calls.filter((c) => c.kind === "refused");
      const failed = calls.filter((c) => c.kind === "failed");
      for (const c of [...refused, ...failed].slice(0, DETAILS_PRINTED)) {
        console.error(`replay: ${c.conversation} turn ${c.turn} ${c.kind}: ${c.error}`);
      }
      const chatRequests = calls.flatMap((c) => c.chat);
      const overflows = chatRequests.filter((r) => r.status === 400).length;
      const summaries = calls.reduce((n, c) => n + c.summarizerRequests, 0);
      const summariesCut = calls.reduce((n, c) => n + c.summariesCut, 0);
      const summarizerErrors = calls.reduce((n, c) => n + c.summarizerErrors, 0);
      const events = calls.flatMap((c) => c.events);
      const eventCounts = new Map<string, number>();
      for (const e of events) eventCounts.set(e, (eventCounts.get(e) ?? 0) + 1);
      const kept = scoreKept(conversations, runs);
      const folded = scoreCompactions(runs);
      const fillPct = folded.fillTokens.map((t) => (t / WINDOW_TOKENS) * 100);
      const accepted = chatRequests.filter((r) => r.status === 200).map((r) => r.promptTokens);

      const figures: Figures = {
        "replay.calls": calls.length,
        "replay.refused": refused.length,
        "replay.failed": failed.length,
        "replay.user_kept_pct": pct(kept.user.kept, kept.user.sampled),
        "replay.assistant_kept_pct": pct(kept.assistant.kept, kept.assistant.sampled),
        "replay.tool_args_kept_pct": pct(kept.tool_args.kept, kept.tool_args.sampled),
        "replay.tool_results_kept_pct": pct(kept.tool_results.kept, kept.tool_results.sampled),
        "replay.fill_after_p95_pct": fillPct.length ? round1(percentile(fillPct, 95)) : 0,
        "replay.refire_pct": pct(folded.refired, folded.withNextCall),
        "replay.summarizer_calls": summaries,
      };
      const { totalRecall } = await import("./replay-recall");
      const recall = totalRecall(recalled);
      figures["replay.recall_by_value_pct"] = pct(recall.byValue, recall.lost);
      figures["replay.recall_by_context_pct"] = pct(recall.byContext, recall.withContext);
      figures["replay.recall_by_context_read_pct"] = pct(recall.byContextRead, recall.withContext);
      figures["replay.lost_uncovered"] = recall.uncovered;

      const planned = conversations.reduce((n, c) => n + plannedCalls(c), 0);
      const subset =
        conversations.length < corpus.length
          ? ` (REPLAY_LIMIT: first ${conversations.length} of ${corpus.length})`
          : "";
      context.note(
        "replay.calls",
        `model calls (${planned} planned) replaying ${conversations.length} conversations${subset} of ${path.relative(REPO_ROOT, corpusPath)} at ${WINDOW_TOKENS.toLocaleString("en-US")} tokens, corpus turns stored ${keepUsage ? "with" : "without"} Fold's usage; ${bench.label}; ${chatRequests.length} chat requests, ${overflows} answered with the fake server's overflow 400, largest accepted prompt ${accepted.length ? Math.max(...accepted) : 0} tokens; ${summaries} summarizer requests (extractive), ${summariesCut} cut at max_tokens, ${summarizerErrors} errors; compaction events: ${[...eventCounts].map(([k, n]) => `${k} ${n}`).join(", ") || "none"}; ${round1(seconds)} s`,
      );
      const first = (list: typeof calls) =>
        list[0]
          ? `; first: ${list[0].conversation} turn ${list[0].turn}: ${list[0].error?.slice(0, 160)}`
          : "";
      context.note(
        "replay.refused",
        `calls whose stream carried Fold's refusal ("…too long…" before any provider call, or "…no longer fits…" after recovery)${first(refused)}`,
      );
      context.note(
        "replay.failed",
        `calls with any other stream error, or with no reply stored${first(failed)}`,
      );
      for (const origin of ORIGINS) {
        const t = kept[origin];
        context.note(
          `replay.${origin}_kept_pct`,
          `${t.kept} of ${t.sampled} identifiers from ${ORIGIN_WORDS[origin]} (≤${SAMPLE_PER_ORIGIN} per conversation by the bench's own regexes: URLs, paths, hex ≥7, numbers with units; last mentioned in the first half first: ${t.firstHalfOnlyKept} of ${t.firstHalfOnly} of those kept) appear verbatim in the body of the conversation's last chat request${t.lostExamples.length ? `; lost e.g. ${t.lostExamples.join(" | ")}` : ""}`,
        );
      }
      context.note(
        "replay.fill_after_p95_pct",
        `prompt tokens of the first chat request after each of ${folded.compactions} compactions (summarized or fallback) ÷ ${WINDOW_TOKENS}${fillPct.length ? `; mean ${round1(fillPct.reduce((a, b) => a + b, 0) / fillPct.length)} %, max ${round1(Math.max(...fillPct))} %` : ""}${folded.withoutFill ? `; ${folded.withoutFill} with no chat request after them` : ""}`,
      );
      context.note(
        "replay.refire_pct",
        `${folded.refired} of ${folded.withNextCall} compactions followed by another on the conversation's very next call`,
      );
      context.note(
        "replay.summarizer_calls",
        `summarizer requests the fake server answered over all ${calls.length} calls (each compaction's, map-reduce parts and continuations included): what compaction costs`,
      );
      const byOrigin = (part: (t: RecallTally) => string) =>
        ORIGINS.map((o) => `${ORIGIN_WORDS[o]} ${part(recalled[o])}`).join(", ");
      context.note(
        "replay.recall_by_value_pct",
        `of the ${recall.lost} sampled identifiers gone from the last request, those the recall tool's search returns (in its excerpts) when asked for the value itself, through the product's port on the chat the replay left; by origin: ${byOrigin((t) => `${t.byValue}/${t.lost}`)}`,
      );
      context.note(
        "replay.recall_by_context_pct",
        `of the ${recall.withContext} lost ones with two telling words or more near their first mention, those a search for the ≤4 telling words just before it (after it, when fewer stand before; words found in more than half of the conversation's turns left out) returns in its excerpts; by origin: ${byOrigin((t) => `${t.byContext}/${t.withContext}`)}`,
      );
      context.note(
        "replay.recall_by_context_read_pct",
        `the same, or found by reading the search's first match whole (a second call): ${byOrigin((t) => `${t.byContextRead}/${t.withContext}`)}`,
      );
      context.note(
        "replay.lost_uncovered",
        `lost identifiers stored only in messages the summary does not cover and the next request's view does not cut (Stage 0): recall does not reach them; by origin: ${byOrigin((t) => String(t.uncovered))}`,
      );
      return figures;
    } finally {
      await fake.close();
      setTimeout(() => {
        console.error(
          `replay: still open after cleanup: ${process.getActiveResourcesInfo().join(", ")}`,
        );
      }, LEAK_REPORT_MS).unref();
    }
  },
};
