import { tool } from "ai";
import { z } from "zod";
import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import { isSummaryRequest } from "../fixtures/fake-openai/summarizer";
import type { ScriptedReply } from "../fixtures/fake-openai/types";
import type { Benchmark } from "./benchmark";
import { configureFold } from "./fold-env";
import { round1 } from "./measure";

/**
 * `toolloop200`: one user message, then a single turn in which the model calls `write_file`
 * 200 times — each call's arguments carry ~4 kB of text and each result is ~20 kB — and
 * then answers, at an 8,192-token window, through Fold's turn pipeline against the fake
 * OpenAI-compatible server. Completed means the final answer was stored and no error was
 * streamed. Everything is generated from a fixed seed.
 */

const PROVIDER = "fake";
const MODEL = "small";
const WINDOW_TOKENS = 8_192;
const TOOL_CALLS = Number(process.env.TOOLLOOP_CALLS) || 200;
const ARGUMENT_CHARS = 4_000;
const RESULT_CHARS = 20_000;
/** Fold's step limit for this run: above the 201 steps the loop needs. */
const MAX_STEPS = 250;
const SEED = 0x5eed;
const FINAL_ANSWER = "All 200 sections are written; the index is in notes/index.md.";
const USER_MESSAGE =
  "Write the design notes as 200 sections, one file each under notes/, then tell me where the index is.";
/** How long after cleanup an open handle is reported (run.ts kills the child at 10 s). */
const LEAK_REPORT_MS = 5_000;

const WORDS = [
  "budget",
  "window",
  "summary",
  "watermark",
  "ledger",
  "tool",
  "result",
  "token",
  "stream",
  "request",
  "reply",
  "chat",
  "model",
  "compaction",
  "trigger",
  "target",
  "reserve",
  "turn",
  "step",
  "lease",
  "provider",
  "estimate",
  "calibration",
  "boundary",
  "history",
  "fold",
];

/** A small deterministic PRNG (mulberry32), so every run writes the same text. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** About `chars` characters of numbered lines of words, with a path and a hash per line. */
function text(seed: number, chars: number, label: string): string {
  const next = random(seed);
  const lines: string[] = [];
  let length = 0;
  for (let line = 1; length < chars; line++) {
    const words = Array.from({ length: 10 }, () => WORDS[Math.floor(next() * WORDS.length)]);
    const hash = Math.floor(next() * 0xffffffff)
      .toString(16)
      .padStart(8, "0");
    const row = `${label} ${line}: ${words.join(" ")} src/${words[0]}/${words[1]}.ts ${hash}`;
    lines.push(row);
    length += row.length + 1;
  }
  return lines.join("\n").slice(0, chars);
}

const sectionPath = (n: number) => `notes/section-${String(n).padStart(3, "0")}.md`;

function script(): ScriptedReply[] {
  const calls: ScriptedReply[] = Array.from({ length: TOOL_CALLS }, (_, i) => ({
    toolCalls: [
      {
        name: "write_file",
        arguments: {
          path: sectionPath(i + 1),
          content: text(SEED + i, ARGUMENT_CHARS, `section ${i + 1}`),
        },
      },
    ],
  }));
  return [...calls, { text: FINAL_ANSWER }];
}

/** The tool the loop calls: it writes nothing, and answers with a long deterministic report. */
const loopTools = {
  write_file: tool({
    description: "Write a text file in the workspace and return the workspace's listing.",
    inputSchema: z.object({ path: z.string(), content: z.string() }),
    execute: async ({ path, content }) =>
      `wrote ${content.length} chars to ${path}\n${text(SEED ^ content.length ^ path.length, RESULT_CHARS, path)}`,
  }),
};

export const benchmark: Benchmark = {
  name: "toolloop200",
  async run(context) {
    const started = performance.now();
    const fake = await startFakeOpenAI({
      models: [{ id: MODEL, maxModelLen: WINDOW_TOKENS }],
      chunkDelayMs: 0,
      summarizer: "extractive",
      // Summaries inside the loop must not eat the scripted steps.
      scriptSummarizer: false,
    });
    try {
      configureFold(fake.url, PROVIDER, { TURN_MAX_STEPS: String(MAX_STEPS) });
      const { openBenchDatabase } = await import("./database");
      const { runDirectTurn } = await import("./direct-turn");
      const { loadHistory } = await import("@/lib/db/queries/messages");
      const { seedChat } = await import("../helpers/fixtures");
      const bench = await openBenchDatabase();
      try {
        const { db } = bench.database;
        const chat = await seedChat(db, { title: "toolloop200" });
        fake.script(...script());
        const turn = await runDirectTurn({
          database: bench.database,
          chatId: chat.id,
          modelId: `${PROVIDER}:${MODEL}`,
          tools: loopTools,
          request: {
            trigger: "submit-message",
            chatId: chat.id,
            modelId: `${PROVIDER}:${MODEL}`,
            message: {
              id: "toolloop-user",
              role: "user",
              parts: [{ type: "text", text: USER_MESSAGE }],
            },
          },
        });
        const seconds = (performance.now() - started) / 1000;

        const reply = (await loadHistory(db, chat.id)).findLast((m) => m.role === "assistant");
        const storedAnswer = JSON.stringify(reply?.parts ?? []).includes(FINAL_ANSWER);
        const chatRequests = fake.requests.filter((r) => !isSummaryRequest(r.messages));
        const summaries = fake.requests.length - chatRequests.length;
        const accepted = chatRequests.filter((r) => r.status === 200);
        const overflows = chatRequests.filter((r) => r.status === 400).length;
        const results = turn.chunks.filter((c) => c.type === "tool-output-available").length;
        const completed = turn.error === null && storedAnswer;
        const peak = accepted.length ? Math.max(...accepted.map((r) => r.promptTokens)) : 0;
        context.note(
          "toolloop200.completed",
          `1 = the final answer was stored and no error streamed; ${TOOL_CALLS} write_file calls of ${ARGUMENT_CHARS.toLocaleString("en-US")}-char arguments and ${RESULT_CHARS.toLocaleString("en-US")}-char results at ${WINDOW_TOKENS.toLocaleString("en-US")} tokens, TURN_MAX_STEPS ${MAX_STEPS}; steps reached: ${accepted.length} chat requests answered (${results} tool results streamed, ${fake.pendingScript} scripted replies unused); ${overflows} overflows answered by the fake server; peak prompt ${peak} tokens; ${summaries} summarizer requests${turn.error ? `; error: ${turn.error.slice(0, 160)}` : ""}${storedAnswer ? "" : "; final answer not stored"}; ${bench.label}; ${round1(seconds)} s`,
        );
        return { "toolloop200.completed": completed ? 1 : 0 };
      } finally {
        await bench.dispose();
      }
    } finally {
      await fake.close();
      setTimeout(() => {
        console.error(
          `toolloop200: still open after cleanup: ${process.getActiveResourcesInfo().join(", ")}`,
        );
      }, LEAK_REPORT_MS).unref();
    }
  },
};
