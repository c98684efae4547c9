import { type RecordedRequest, startFakeOpenAI } from "../fixtures/fake-openai/server";
import type { Benchmark, Figures } from "./benchmark";
import type { HttpRun, HttpSample } from "./chat-http";
import type { BenchChat } from "./chat-turns";
import { configureFold } from "./fold-env";
import { percentile, round1 } from "./measure";

/**
 * `chat`: the time Fold adds to time-to-first-token. 20 users each hold one chat and send
 * 10 turns; the chats run concurrently, each chat's turns one after another, against the
 * fake OpenAI-compatible server with no delay of its own between chunks. The same plan then
 * runs over real HTTP against `next start` (chat-http.ts), with one chat alone after it (back
 * to back, then after pauses as a reader takes them) and the server's own CPU per turn.
 */

const CHATS = 20;
const TURNS_PER_CHAT = 10;
/** Turns of the one chat alone over HTTP: enough that its p95 is not simply the slowest turn. */
const SINGLE_TURNS = 60;
/**
 * Turns of the same chat after it, each after a pause longer than an idle database connection
 * is kept by pg's pool (10 s) and a provider connection by undici (4 s): a user who reads.
 */
const PAUSED_TURNS = 6;
const PAUSE_MS = 11_000;
/**
 * Then turns whose replies are long, as the provider sends them as fast as it can (a local
 * server, or a busy Fold reading a burst): ~1,200 chunks of 4 characters each.
 */
const LONG_REPLY_TURNS = 20;
const LONG_REPLY_TOKENS = 1_000;
const LONG_REPLY_CHUNK_CHARS = 4;
/** Unmeasured turns per chat first: JIT, the pool's connections, better-auth's setup. */
const WARMUP_TURNS_PER_CHAT = 1;
const PROVIDER = "fake";
const MODEL = "fake-model";
const MODEL_WINDOW_TOKENS = 128_000;

type Sample = { directMs: number; foldMs: number };

/**
 * The baseline is only fair while it sends exactly what Fold sends. Each turn's text is
 * unique, so every request body the fake server saw must have come exactly twice.
 */
function checkBaselineMatchesFold(requests: readonly RecordedRequest[]): void {
  const seen = new Map<string, number>();
  for (const request of requests) {
    const body = JSON.stringify(request.body);
    seen.set(body, (seen.get(body) ?? 0) + 1);
  }
  const unpaired = [...seen].filter(([, count]) => count !== 2);
  if (unpaired.length > 0) {
    throw new Error(
      `the direct baseline no longer sends what Fold sends: ${unpaired.length} of ${seen.size} request bodies are unpaired; update chat-turns.ts. One of them: ${unpaired[0]?.[0].slice(0, 400)}`,
    );
  }
}

/**
 * Overhead is paired per turn: just before each Fold turn the same chat sends the direct
 * request for the same history, so both see the same conversation length and the same
 * concurrent load from the other chats. Percentiles are then taken over the 200 differences.
 * (Subtracting the medians of two separately measured distributions would compare different
 * load conditions and hide how the extra time is spread.)
 */
async function runChat(
  chat: BenchChat,
  index: number,
  turns: number,
  turnsModule: typeof import("./chat-turns"),
): Promise<Sample[]> {
  const samples: Sample[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const text = `Chat ${index}, turn ${turn}: how does a context window fill up over a conversation?`;
    const directMs = await turnsModule.directTtftMs(chat, text);
    const foldMs = await turnsModule.foldTtftMs(chat, text);
    samples.push({ directMs, foldMs });
  }
  return samples;
}

function httpFigures(http: HttpRun): Figures {
  const overhead = (samples: readonly HttpSample[]) => samples.map((s) => s.foldMs - s.directMs);
  return {
    "chat.http_ttft_overhead_p50_ms": round1(percentile(overhead(http.concurrent), 50)),
    "chat.http_ttft_overhead_p95_ms": round1(percentile(overhead(http.concurrent), 95)),
    "chat.http_ttft_fold_p50_ms": round1(
      percentile(
        http.concurrent.map((s) => s.foldMs),
        50,
      ),
    ),
    "chat.http_single_ttft_overhead_p50_ms": round1(percentile(overhead(http.single), 50)),
    "chat.http_single_ttft_overhead_p95_ms": round1(percentile(overhead(http.single), 95)),
    "chat.http_single_ttft_fold_p50_ms": round1(
      percentile(
        http.single.map((s) => s.foldMs),
        50,
      ),
    ),
    "chat.http_single_ttft_direct_p50_ms": round1(
      percentile(
        http.single.map((s) => s.directMs),
        50,
      ),
    ),
    "chat.http_single_headers_p50_ms": round1(
      percentile(
        http.single.map((s) => s.headersMs),
        50,
      ),
    ),
    "chat.http_paused_ttft_overhead_p50_ms": round1(percentile(overhead(http.paused), 50)),
    "chat.http_paused_ttft_fold_p50_ms": round1(
      percentile(
        http.paused.map((s) => s.foldMs),
        50,
      ),
    ),
    "chat.cpu_ms_per_turn": round1(http.cpuMsPerTurn),
    "chat.http_long_reply_cpu_ms_per_turn": round1(http.longReplyCpuMsPerTurn),
    ...(http.databaseCpuMsPerTurn === null
      ? {}
      : { "chat.db_cpu_ms_per_turn": round1(http.databaseCpuMsPerTurn) }),
  };
}

export const benchmark: Benchmark = {
  name: "chat",
  async run(context) {
    const fake = await startFakeOpenAI({
      models: [{ id: MODEL, maxModelLen: MODEL_WINDOW_TOKENS }],
      chunkDelayMs: 0,
    });
    try {
      configureFold(fake.url, PROVIDER);
      const { openBenchDatabase } = await import("./database");
      const bench = await openBenchDatabase();
      try {
        const turns = await import("./chat-turns");
        const chats = await Promise.all(
          Array.from({ length: CHATS }, (_, i) =>
            turns.openChat(bench.database, `bench-${i}@example.com`, `${PROVIDER}:${MODEL}`),
          ),
        );
        const all = (count: number) =>
          Promise.all(chats.map((chat, i) => runChat(chat, i, count, turns)));
        await all(WARMUP_TURNS_PER_CHAT);
        const samples = (await all(TURNS_PER_CHAT)).flat();
        console.error("chat: in-process phase done; starting `next start` for the HTTP phase");
        const { runOverHttp } = await import("./chat-http");
        const http = await runOverHttp(bench, fake.url, `${PROVIDER}:${MODEL}`, {
          chats: CHATS,
          turns: TURNS_PER_CHAT,
          warmup: WARMUP_TURNS_PER_CHAT,
          singleTurns: SINGLE_TURNS,
          pausedTurns: PAUSED_TURNS,
          pauseMs: PAUSE_MS,
          longReplies: {
            turns: LONG_REPLY_TURNS,
            begin: () =>
              fake.configure({
                replyTokens: LONG_REPLY_TOKENS,
                chunkChars: LONG_REPLY_CHUNK_CHARS,
              }),
          },
        });
        checkBaselineMatchesFold(fake.requests);

        const overhead = samples.map((s) => s.foldMs - s.directMs);
        const figures: Figures = {
          "chat.ttft_overhead_p50_ms": round1(percentile(overhead, 50)),
          "chat.ttft_overhead_p95_ms": round1(percentile(overhead, 95)),
          "chat.ttft_fold_p50_ms": round1(
            percentile(
              samples.map((s) => s.foldMs),
              50,
            ),
          ),
          "chat.ttft_direct_p50_ms": round1(
            percentile(
              samples.map((s) => s.directMs),
              50,
            ),
          ),
          "chat.turns": samples.length,
          ...httpFigures(http),
        };
        const setup = `${CHATS} chats × ${TURNS_PER_CHAT} turns, ${CHATS} concurrent; ${bench.label}`;
        context.note("chat.ttft_overhead_p50_ms", `Fold − direct, paired per turn; ${setup}`);
        context.note("chat.ttft_overhead_p95_ms", "Fold − direct, paired per turn");
        context.note("chat.ttft_fold_p50_ms", "POST /api/chat in-process → first text-delta");
        context.note(
          "chat.ttft_direct_p50_ms",
          "AI SDK streamText → fake server, same request as Fold",
        );
        context.note("chat.turns", `measured, after ${CHATS * WARMUP_TURNS_PER_CHAT} warm-up`);
        context.note(
          "chat.http_ttft_overhead_p50_ms",
          `over HTTP to \`next start\` (no Redis), Fold − direct paired per turn; ${setup}`,
        );
        context.note("chat.http_ttft_overhead_p95_ms", "over HTTP, Fold − direct, 20 concurrent");
        context.note(
          "chat.http_single_ttft_overhead_p95_ms",
          `over HTTP, one chat alone, ${SINGLE_TURNS} turns`,
        );
        context.note(
          "chat.http_single_ttft_fold_p50_ms",
          "over HTTP, one chat alone: POST /api/chat → first text-delta",
        );
        context.note(
          "chat.http_single_ttft_direct_p50_ms",
          "one chat alone: the paired direct request → first text-delta",
        );
        context.note(
          "chat.http_single_headers_p50_ms",
          "over HTTP, one chat alone: POST /api/chat → response headers (admission, lease, history loaded, stream opened); the rest of the TTFT is the model call",
        );
        context.note(
          "chat.http_paused_ttft_overhead_p50_ms",
          `over HTTP, the same chat, ${PAUSED_TURNS} turns each after ${PAUSE_MS / 1000} s of quiet (a user reading the reply), Fold − direct`,
        );
        context.note(
          "chat.http_paused_ttft_fold_p50_ms",
          "the same turns: POST /api/chat → first text-delta",
        );
        context.note(
          "chat.cpu_ms_per_turn",
          "CPU of the `next start` process (/proc) over the concurrent HTTP turns ÷ turns: serving, the turn, streaming and storing the reply; the fake provider runs elsewhere",
        );
        context.note(
          "chat.http_long_reply_cpu_ms_per_turn",
          `CPU of the \`next start\` process per turn of one chat alone whose replies are ${LONG_REPLY_TOKENS} tokens, sent by the provider at once in ${LONG_REPLY_CHUNK_CHARS}-character chunks; ${LONG_REPLY_TURNS} turns`,
        );
        context.note(
          "chat.db_cpu_ms_per_turn",
          "CPU of this machine's Postgres processes (/proc) over the same turns ÷ turns: the database's work for Fold (absent when Postgres runs elsewhere)",
        );
        return figures;
      } finally {
        await bench.dispose();
      }
    } finally {
      await fake.close();
    }
  },
};
