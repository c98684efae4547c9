import type { Database } from "@/lib/db/client";
import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import type { FakeOpenAI, LoadState } from "../fixtures/fake-openai/types";
import { chatRequests, factsSeen, type LocalPlan, localPlan } from "../helpers/local-chat";
import type { Benchmark, Figures } from "./benchmark";
import { round1 } from "./measure";

/**
 * `local` (issue 15): Fold against a local server that runs a model trained for 131,072 tokens
 * at 4,096 and cuts longer prompts silently to their last 4,096 tokens, as Ollama does. Two
 * 50-turn chats with 10 facts planted in the user's messages, through the real POST /api/chat
 * handler in-process: one against a server whose /api/ps tells the loaded context (the model
 * loads with the first request), one against a server that cannot tell (no /api/ps) and no
 * default configured in Fold. Judged from outside Fold: cuts from the fake server's own record,
 * detection from the timeline Fold streamed, facts by plain substring of what the last chat
 * request showed the model.
 */

const MODEL = "llama3.1:8b";
const LOADED_CONTEXT = 4096;
const TRAINED_CONTEXT = 131_072;
const AUTH_SECRET = "bench-secret-bench-secret-bench-secret-0123";
/** A model's replies, as long as a short real answer. */
const REPLY_TOKENS = 120;
const CHUNK_CHARS = 64;
const LEAK_REPORT_MS = 5_000;

type Variant = { key: "with_ps" | "without_ps"; provider: string; loadState: LoadState };

const VARIANTS: readonly Variant[] = [
  { key: "with_ps", provider: "ollama", loadState: "on-first-request" },
  { key: "without_ps", provider: "ollama-old", loadState: "unreported" },
];

type ChatRun = {
  /** Requests the server cut: chat requests, and the summarizer's. */
  cutChat: number;
  cutSummaries: number;
  /** 0-based turns whose chat request was cut, and where Fold's timeline reported a cut. */
  cutTurns: number[];
  detectedTurns: number[];
  failedTurns: number;
  factsKept: number;
  seconds: number;
};

function configureFold(servers: ReadonlyArray<{ variant: Variant; fake: FakeOpenAI }>): void {
  for (const [i, { variant, fake }] of servers.entries()) {
    const prefix = i === 0 ? "OPENAI_COMPATIBLE_" : `OPENAI_COMPATIBLE_${i + 1}_`;
    process.env[`${prefix}BASE_URL`] = fake.url;
    process.env[`${prefix}NAME`] = variant.provider;
  }
  process.env.DEMO_MODEL = "never";
  process.env.LOG_LEVEL = "silent";
  process.env.BETTER_AUTH_SECRET = AUTH_SECRET;
  // One user sends 50 turns in a few seconds: no sign-up approval, no turn rate limit.
  process.env.REGISTRATION = "open";
  process.env.RATE_LIMIT_TURNS_PER_MINUTE = "0";
}

async function runChat(
  database: Database,
  fake: FakeOpenAI,
  variant: Variant,
  plan: LocalPlan,
): Promise<ChatRun> {
  const started = performance.now();
  // These load Fold: only after configureFold has set the environment.
  const { openChat } = await import("./chat-turns");
  const { sendTurn } = await import("../helpers/turns");
  const modelId = `${variant.provider}:${MODEL}`;
  const chat = await openChat(database, `local-${variant.key}@example.com`, modelId);
  const run: ChatRun = {
    cutChat: 0,
    cutSummaries: 0,
    cutTurns: [],
    detectedTurns: [],
    failedTurns: 0,
    factsKept: 0,
    seconds: 0,
  };
  for (const [turn, text] of plan.turns.entries()) {
    const from = fake.requests.length;
    const { response, chunks } = await sendTurn(database, chat.browser, {
      chatId: chat.chatId,
      modelId,
      text,
    });
    if (!response.ok || chunks.some((c) => c.type === "error")) run.failedTurns += 1;
    const cutChat = chatRequests(fake, from).filter((r) => r.truncatedFrom !== null).length;
    const cutAll = fake.requests.slice(from).filter((r) => r.truncatedFrom !== null).length;
    run.cutChat += cutChat;
    run.cutSummaries += cutAll - cutChat;
    if (cutChat > 0) run.cutTurns.push(turn);
    const reported = chunks.some((c) => {
      const output = c.output as { reason?: string; outcome?: string } | undefined;
      return output?.reason === "truncated" && output.outcome === "skipped";
    });
    if (reported) run.detectedTurns.push(turn);
  }
  run.factsKept = factsSeen(plan.facts, chatRequests(fake).at(-1)).length;
  run.seconds = (performance.now() - started) / 1000;
  return run;
}

/** Cut turns until Fold said so (1: on the turn of the first cut); 0 when nothing was cut. */
function turnsToDetect(run: ChatRun, turns: number): number {
  const first = run.cutTurns[0];
  if (first === undefined) return 0;
  const detected = run.detectedTurns.find((turn) => turn >= first);
  const until = detected ?? turns - 1;
  return run.cutTurns.filter((turn) => turn <= until).length;
}

export const benchmark: Benchmark = {
  name: "local",
  async run(context) {
    const plan = localPlan();
    const servers = await Promise.all(
      VARIANTS.map(async (variant) => ({
        variant,
        fake: await startFakeOpenAI({
          flavor: "ollama",
          loadState: variant.loadState,
          truncatePrompts: true,
          models: [{ id: MODEL, maxModelLen: LOADED_CONTEXT, trainedContext: TRAINED_CONTEXT }],
          summarizer: "extractive",
          replyTokens: REPLY_TOKENS,
          chunkChars: CHUNK_CHARS,
        }),
      })),
    );
    try {
      configureFold(servers);
      const { openBenchDatabase } = await import("./database");
      const bench = await openBenchDatabase();
      try {
        const runs = new Map<Variant["key"], ChatRun>();
        for (const { variant, fake } of servers) {
          const run = await runChat(bench.database, fake, variant, plan);
          runs.set(variant.key, run);
          console.error(
            `local: ${variant.key}: ${run.cutChat} cut chat requests (turns ${run.cutTurns.join(", ") || "none"}), detected on turns ${run.detectedTurns.join(", ") || "none"}, ${run.factsKept}/${plan.facts.length} facts, ${run.seconds.toFixed(1)} s`,
          );
        }
        const withPs = runs.get("with_ps") as ChatRun;
        const withoutPs = runs.get("without_ps") as ChatRun;
        const keptPct = (run: ChatRun) => round1((run.factsKept / plan.facts.length) * 100);
        const figures: Figures = {
          "local.silent_truncations_with_ps": withPs.cutChat + withPs.cutSummaries,
          "local.silent_truncations_without_ps": withoutPs.cutChat + withoutPs.cutSummaries,
          "local.turns_to_detect": turnsToDetect(withoutPs, plan.turns.length),
          "local.user_facts_kept_pct": Math.min(keptPct(withPs), keptPct(withoutPs)),
          "local.failed_turns": withPs.failedTurns + withoutPs.failedTurns,
        };
        const where = `${bench.label}; ${plan.turns.length} turns, window ${LOADED_CONTEXT} of ${TRAINED_CONTEXT} trained`;
        context.note(
          "local.silent_truncations_with_ps",
          `requests the server cut (chat ${withPs.cutChat}, summarizer ${withPs.cutSummaries}); /api/ps answers; ${where}`,
        );
        context.note(
          "local.silent_truncations_without_ps",
          `requests the server cut (chat ${withoutPs.cutChat} on turns ${withoutPs.cutTurns.map((t) => t + 1).join(", ") || "none"}, summarizer ${withoutPs.cutSummaries}); no /api/ps, no default configured`,
        );
        context.note(
          "local.turns_to_detect",
          `cut turns until Fold's timeline reported the cut (detected on turn ${withoutPs.detectedTurns.map((t) => t + 1).join(", ") || "never"})`,
        );
        context.note(
          "local.user_facts_kept_pct",
          `planted facts in the last chat request the model saw, lower of the two chats (with /api/ps ${withPs.factsKept}/${plan.facts.length}, without ${withoutPs.factsKept}/${plan.facts.length})`,
        );
        return figures;
      } finally {
        await bench.dispose();
      }
    } finally {
      await Promise.all(servers.map(({ fake }) => fake.close()));
      setTimeout(() => {
        console.error(
          `local: still open after cleanup: ${process.getActiveResourcesInfo().join(", ")}`,
        );
      }, LEAK_REPORT_MS).unref();
    }
  },
};
