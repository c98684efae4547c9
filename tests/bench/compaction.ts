import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import type { Benchmark, Figures } from "./benchmark";
import { configureFold } from "./fold-env";
import { percentile, round1 } from "./measure";

/**
 * `compaction`: whether the turn after a compaction waits for the summarizer. Each round
 * fills a new chat with long turns until a reply leaves the next turn over the trigger,
 * which starts Fold's background compaction; the next turn is then sent at once, while a
 * summarizer that takes 3 s is still writing. Its time to first token is compared with the
 * ordinary turns of the same chats, through the same in-process POST /api/chat.
 */

const PROVIDER = "fake";
const MODEL = "small";
const MODEL_ID = `${PROVIDER}:${MODEL}`;
const WINDOW_TOKENS = 4_096;
const REPLY_TOKENS = 120;
/** A summarizer as slow as a real one writing a summary. */
const SUMMARY_DELAY_MS = 3_000;
const ROUNDS = 12;
/** Long turns before giving up on a round reaching the trigger. */
const MAX_FILL_TURNS = 15;
const WORDS_PER_TURN = 220;

function longText(round: number, turn: number): string {
  const words = ["context", "window", "summary", "budget", "token", "turn", "history"];
  const body = Array.from({ length: WORDS_PER_TURN }, (_, i) => words[(i + turn) % words.length]);
  return `Round ${round}, question ${turn}: ${body.join(" ")}`;
}

export const benchmark: Benchmark = {
  name: "compaction",
  async run(context) {
    const fake = await startFakeOpenAI({
      models: [{ id: MODEL, maxModelLen: WINDOW_TOKENS }],
      replyTokens: REPLY_TOKENS,
      summaryDelayMs: SUMMARY_DELAY_MS,
    });
    configureFold(fake.url, PROVIDER);
    // The default, set anyway: this benchmark is about the feature.
    process.env.COMPACTION_BACKGROUND = "true";
    // Fold parses its environment on first use: load it only now.
    const { openBenchDatabase } = await import("./database");
    const turns = await import("./chat-turns");
    const { compactionSettled, isCompactingNow } = await import("../helpers/db");
    const { listCompactionEvents } = await import("@/lib/db/queries/compaction-events");
    const bench = await openBenchDatabase();

    try {
      const ordinary: number[] = [];
      const afterTrigger: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const chat = await turns.openChat(bench.database, `round-${round}@example.com`, MODEL_ID);
        // The decision to compact is taken before a turn frees the chat: known when it ends.
        let running = false;
        for (let turn = 0; turn < MAX_FILL_TURNS && !running; turn++) {
          ordinary.push(await turns.foldTtftMs(chat, longText(round, turn)));
          running = await isCompactingNow(bench.database.db, chat.chatId);
        }
        if (!running) throw new Error(`round ${round}: no reply crossed the trigger`);
        afterTrigger.push(await turns.foldTtftMs(chat, `Round ${round}: a short follow-up.`));
        await compactionSettled(bench.database.db, chat.chatId);
        const events = await listCompactionEvents(bench.database.db, chat.chatId);
        if (!events.some((e) => e.outcome === "summarized")) {
          throw new Error(`round ${round}: the background compaction did not commit`);
        }
      }
      const figures: Figures = {
        "compaction.next_turn_ttft_p95_ms": round1(percentile(afterTrigger, 95)),
        "compaction.next_turn_ttft_p50_ms": round1(percentile(afterTrigger, 50)),
        "compaction.ordinary_ttft_p50_ms": round1(percentile(ordinary, 50)),
      };
      context.note(
        "compaction.next_turn_ttft_p95_ms",
        `ms to first text-delta of the turn sent right after a reply that crossed the trigger, while a ${SUMMARY_DELAY_MS / 1000} s summarizer writes in the background; ${ROUNDS} rounds, ${WINDOW_TOKENS}-token window, ${bench.label}`,
      );
      context.note("compaction.next_turn_ttft_p50_ms", "the same, median");
      context.note(
        "compaction.ordinary_ttft_p50_ms",
        `ms to first text-delta of the ${ordinary.length} ordinary turns that filled the same chats`,
      );
      return figures;
    } finally {
      await bench.dispose();
      await fake.close();
    }
  },
};
