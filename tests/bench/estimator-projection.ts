import type { Chat } from "@/lib/db/schema";
import type { MessageStats } from "@/lib/message/stats";
import { type FoldUIMessage, rowToUIMessage } from "@/lib/message/ui-message";
import { startFakeOpenAI } from "../fixtures/fake-openai/server";
import type { BenchContext, Figures } from "./benchmark";
import { CORPUS } from "./corpus";
import { percentile } from "./measure";

/**
 * The `estimator` benchmark's projection figures: what the product's per-turn path costs an
 * unchanged chat as its stored history grows (DESIGN §5). A chat of 100, 1,000 or 10,000
 * messages is stored in a real migrated database with a summary whose watermark leaves the
 * last 20 messages after it, the turn's new user message already stored, and a last reply
 * whose real usage is far under the trigger. Each run does what a turn does before the model
 * call: `loadHistory` + `rowToUIMessage`, `chatRequestFrame` + `modelBudget`, then
 * `compactChat`, which takes Tier 1's no-op path. The chat model's window comes from the fake
 * OpenAI-compatible server's model list, as a self-hosted server's would.
 */

const PROVIDER = "fake";
const MODEL = "bench-model";
/** Another model on the same server: the last reply is not its, so Tier 1 estimates the view. */
const OTHER_MODEL = "bench-other";
const MODEL_ID = `${PROVIDER}:${MODEL}`;
const OTHER_MODEL_ID = `${PROVIDER}:${OTHER_MODEL}`;
/** Large enough that the keep window, summary and overhead sit far under the trigger. */
const WINDOW_TOKENS = 32_768;
const SIZES = [100, 1_000, 10_000] as const;
/** Messages after the watermark: the keep window a compaction leaves behind. */
const KEEP_WINDOW_MESSAGES = 20;
/** Bullets per summary heading: a summary of ~1,000 tokens. */
const SUMMARY_LINES_PER_HEADING = 4;
const SUMMARY_LINE_CHARS = 160;
/** The last reply's real usage must stay below this share of the trigger. */
const FAR_UNDER_TRIGGER_SHARE = 0.5;
/** Untimed runs of every chat and model first (JIT, connection pool, window cache), then timed runs; the median is reported. */
const WARMUP_RUNS = 3;
const TIMED_RUNS = 15;
/** Rows per INSERT while seeding. */
const SEED_BATCH_ROWS = 500;
/** In-memory rowToUIMessage: timed calls split in batches; the median batch mean is reported. */
const BATCHES = 5;
/** …about this many messages converted in all, per size. */
const ROWS_TO_UI_MESSAGES = 200_000;

/** Texts to fill a long chat with, taken from the corpus. */
function corpusTexts(): { user: string[]; assistant: string[] } {
  const user: string[] = [];
  const assistant: string[] = [];
  for (const conversation of CORPUS) {
    for (const message of conversation.messages) {
      if (message.role === "user" && typeof message.content === "string") {
        if (message.content.length < 2_000) user.push(message.content);
      } else if (message.role === "assistant" && typeof message.content !== "string") {
        const text = message.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
        if (text) assistant.push(text);
      }
    }
  }
  return { user, assistant };
}

function statsFor(input: {
  model: string;
  contextTokens: number;
  outputTokens: number;
  at: number;
  viewVersion: number;
}): MessageStats {
  return {
    model: input.model,
    inputTokens: input.contextTokens,
    outputTokens: input.outputTokens,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    contextTokens: input.contextTokens,
    lastStepOutputTokens: input.outputTokens,
    steps: 1,
    viewVersion: input.viewVersion,
    startedAt: input.at,
    firstTokenAt: input.at + 300,
    finishedAt: input.at + 2_000,
    finishReason: "stop",
  };
}

/**
 * `count` messages, user and assistant alternating from a user message, every reply with stats
 * of an earlier compaction version; every tenth reply used a tool first. Message ids are unique
 * across the database, so each chat's carry `idPrefix`.
 */
function buildHistory(count: number, olderVersion: number, idPrefix: string): FoldUIMessage[] {
  const texts = corpusTexts();
  const messages: FoldUIMessage[] = [];
  let context = 0;
  for (let i = 0; i < count; i++) {
    const turn = Math.floor(i / 2);
    if (i % 2 === 0) {
      const text = texts.user[turn % texts.user.length] ?? "";
      context += Math.ceil(text.length / 4) + 4;
      messages.push({ id: `${idPrefix}-${i}`, role: "user", parts: [{ type: "text", text }] });
      continue;
    }
    const text = texts.assistant[turn % texts.assistant.length] ?? "";
    const output = Math.ceil(text.length / 4);
    const parts: FoldUIMessage["parts"] = [{ type: "step-start" }];
    if (turn % 10 === 0) {
      parts.push(
        {
          type: "dynamic-tool",
          toolName: "web_search",
          toolCallId: `call-${i}`,
          state: "output-available",
          input: { query: `turn ${turn}`, max_results: 3 },
          output: { results: [{ title: `Result ${turn}`, url: `https://example.com/${turn}` }] },
        },
        { type: "step-start" },
      );
    }
    parts.push({ type: "text", text });
    messages.push({
      id: `${idPrefix}-${i}`,
      role: "assistant",
      parts,
      metadata: {
        stats: statsFor({
          model: MODEL_ID,
          contextTokens: context,
          outputTokens: output,
          at: 1_750_000_000_000 + i * 60_000,
          viewVersion: olderVersion,
        }),
      },
    });
    context += output + 4;
  }
  return messages;
}

/** A summary under Fold's own headings, filled with corpus lines. */
function summaryText(headings: readonly string[]): string {
  const lines = corpusTexts().user.map((t) => t.replace(/\s+/g, " ").slice(0, SUMMARY_LINE_CHARS));
  return headings
    .map((heading, h) => {
      const bullets = Array.from(
        { length: SUMMARY_LINES_PER_HEADING },
        (_, i) => `- ${lines[(h * SUMMARY_LINES_PER_HEADING + i) % lines.length]}`,
      );
      return `## ${heading}\n${bullets.join("\n")}`;
    })
    .join("\n\n");
}

function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** ms, two decimals. */
const round2 = (value: number) => Math.round(value * 100) / 100;

export async function projectionFigures(context: BenchContext): Promise<Figures> {
  const fake = await startFakeOpenAI({
    models: [
      { id: MODEL, maxModelLen: WINDOW_TOKENS },
      { id: OTHER_MODEL, maxModelLen: WINDOW_TOKENS },
    ],
  });
  process.env.OPENAI_COMPATIBLE_BASE_URL = fake.url;
  process.env.OPENAI_COMPATIBLE_NAME = PROVIDER;
  process.env.DEMO_MODEL = "never";
  process.env.LOG_LEVEL = "silent";
  // Fold parses its environment on first use: load it only now.
  const { openBenchDatabase } = await import("./database");
  const { chatRequestFrame } = await import("@/lib/ai/request-frame");
  const { modelBudget } = await import("@/lib/chat/budget");
  const { compactChat } = await import("@/lib/chat/compact");
  const { SUMMARY_HEADINGS } = await import("@/lib/compaction/prompts");
  const { summaryMessage } = await import("@/lib/compaction/view");
  const { defaultEstimator } = await import("@/lib/context/tokens");
  const { casCompactionState } = await import("@/lib/db/compaction-state");
  const { withDatabase } = await import("@/lib/db/client");
  const { loadHistory } = await import("@/lib/db/queries/messages");
  const { message } = await import("@/lib/db/schema");
  const { seedChat } = await import("../helpers/fixtures");

  const bench = await openBenchDatabase();
  const { db } = bench.database;
  const noSummarizer = () => {
    throw new Error("the no-op path called for a summarizer");
  };

  /** One turn's path up to the model call; returns its ms and what Tier 1 decided. */
  async function turnPath(chat: Chat, modelId: string) {
    const started = performance.now();
    const history = (await loadHistory(db, chat.id)).map(rowToUIMessage);
    const [frame, model] = await Promise.all([
      chatRequestFrame(new Date()),
      modelBudget(db, modelId),
    ]);
    const outcome = await compactChat(
      { db, resolveModel: noSummarizer },
      { chat, history, model, overheadTokens: frame.overheadTokens },
    );
    return { ms: performance.now() - started, outcome, model };
  }

  /** Stores a chat of `size` messages plus the turn's new user message. */
  async function seed(size: number): Promise<{ chat: Chat; afterMessages: number }> {
    const frame = await chatRequestFrame(new Date());
    const chat = await seedChat(db, { title: `projection ${size}` });
    const summary = summaryText(SUMMARY_HEADINGS);
    const watermarkIndex = size - 1 - KEEP_WINDOW_MESSAGES;
    const history = buildHistory(size, chat.version, chat.id);
    const watermark = history[watermarkIndex]?.id ?? null;
    const written = await casCompactionState(db, chat.id, chat.version, {
      contextSummary: summary,
      summaryWatermark: watermark,
    });
    if (!written?.won) throw new Error("could not store the summary and watermark");
    const version = written.chat.version;

    // The last reply was sent this view at this version; its real count is the view's size.
    const after = history.slice(watermarkIndex + 1);
    const last = after.at(-1);
    if (last?.role !== "assistant" || !last.metadata?.stats) {
      throw new Error("the seeded history must end with a reply");
    }
    last.metadata.stats = statsFor({
      model: MODEL_ID,
      contextTokens:
        frame.overheadTokens +
        defaultEstimator.estimateUIMessages([summaryMessage(summary), ...after.slice(0, -1)]),
      outputTokens: last.metadata.stats.outputTokens,
      at: last.metadata.stats.startedAt,
      viewVersion: version,
    });
    history.push({
      id: `${chat.id}-${size}`,
      role: "user",
      parts: [{ type: "text", text: "And what should I change first?" }],
    });

    for (let at = 0; at < history.length; at += SEED_BATCH_ROWS) {
      await db.insert(message).values(
        history.slice(at, at + SEED_BATCH_ROWS).map((m, i) => ({
          id: m.id,
          chatId: chat.id,
          seq: at + i,
          role: m.role,
          parts: m.parts,
          metadata: m.metadata ?? null,
        })),
      );
    }
    return { chat: written.chat, afterMessages: after.length + 1 };
  }

  async function noopRun(chat: Chat, modelId: string) {
    const run = await turnPath(chat, modelId);
    if (run.outcome.trace !== null || run.outcome.projectedTokens === null) {
      throw new Error(`${modelId}: expected Tier 1's no-op path, got a compaction`);
    }
    return run;
  }

  async function timeRuns(chat: Chat, modelId: string) {
    const runs: Array<Awaited<ReturnType<typeof turnPath>>> = [];
    for (let run = 0; run < TIMED_RUNS; run++) runs.push(await noopRun(chat, modelId));
    const last = runs.at(-1);
    if (!last) throw new Error("no runs");
    return { ms: median(runs.map((r) => r.ms)), last };
  }

  try {
    return await withDatabase(bench.database, async () => {
      const figures: Figures = {};
      const seeded = [];
      for (const size of SIZES) seeded.push({ size, ...(await seed(size)) });
      // Warm every size and both paths before any is timed: the first measured pays no JIT.
      for (const chat of seeded) {
        for (let run = 0; run < WARMUP_RUNS; run++) {
          await noopRun(chat.chat, MODEL_ID);
          await noopRun(chat.chat, OTHER_MODEL_ID);
        }
      }

      const sameModel: number[] = [];
      for (const chat of seeded) {
        const { ms, last } = await timeRuns(chat.chat, MODEL_ID);
        const trigger = last.model.budget.trigger;
        const projected = last.outcome.projectedTokens ?? 0;
        if (projected >= FAR_UNDER_TRIGGER_SHARE * trigger) {
          throw new Error(
            `${chat.size} messages: projected ${projected} is not far under the trigger ${trigger}`,
          );
        }
        sameModel.push(ms);
        figures[`projection.ms_${chat.size}`] = round2(ms);
        const growth = ms / (sameModel[0] || 1);
        context.note(
          `projection.ms_${chat.size}`,
          chat.size === SIZES[0]
            ? `ms; one turn's path before the model call, for an unchanged chat of ${chat.size} stored messages plus the turn's new user message, on ${bench.label}: loadHistory + rowToUIMessage, chatRequestFrame + modelBudget, compactChat on Tier 1's no-op path (the last reply's real usage; ${chat.afterMessages} messages after the watermark; projected ${projected} < trigger ${trigger}); median of ${TIMED_RUNS} runs`
            : `ms; the same for ${chat.size} stored messages; ${growth.toFixed(1)}× the ${SIZES[0]}-message time`,
        );
      }

      for (const chat of seeded) {
        const { ms } = await timeRuns(chat.chat, OTHER_MODEL_ID);
        figures[`projection.model_switch_ms_${chat.size}`] = round2(ms);
        context.note(
          `projection.model_switch_ms_${chat.size}`,
          "ms; the same path when the chat's model changed: the last reply is another model's, so Tier 1 estimates the view (summary + messages after the watermark) instead of using its real usage",
        );
      }

      for (const chat of seeded) {
        const rows = await loadHistory(db, chat.chat.id);
        figures[`projection.rows_to_ui_us_${chat.size}`] = round2(rowsToUiUs(rows));
        context.note(
          `projection.rows_to_ui_us_${chat.size}`,
          "µs per rows.map(rowToUIMessage) on rows already in memory: the conversion step inside projection.ms_*",
        );
      }
      return figures;
    });
  } finally {
    await bench.dispose();
    await fake.close();
  }
}

/** µs per rows.map(rowToUIMessage): a warm-up, then calls in batches; the median batch mean. */
function rowsToUiUs(rows: ReadonlyArray<Parameters<typeof rowToUIMessage>[0]>): number {
  const iterations = Math.max(BATCHES * 2, Math.round(ROWS_TO_UI_MESSAGES / rows.length));
  let sink = 0;
  for (let i = 0; i < Math.max(1, iterations / 4); i++) sink += rows.map(rowToUIMessage).length;
  const perBatch = Math.max(1, Math.round(iterations / BATCHES));
  const means: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < perBatch; i++) sink += rows.map(rowToUIMessage).length;
    means.push(Number(process.hrtime.bigint() - start) / 1_000 / perBatch);
  }
  if (sink === 0) throw new Error("unreachable: keeps the calls from being optimized away");
  return median(means);
}
