import type { Benchmark, Figures } from "./benchmark";
import { percentile } from "./measure";
import { createRandom, words } from "./sim-plan";

/**
 * `tier1`: the CPU Tier 1 costs a turn, apart from the summarizer call (DESIGN §8.2: the
 * no-op path "must cost well under a millisecond for a 1,000-message chat"). For stored
 * histories of 100, 1,000 and 10,000 messages — user and assistant text, fetch_url calls
 * with outputs, compaction traces, assistant stats — with a summary whose watermark leaves a
 * realistic keep window after it, times `runTier1` for the next turn (history + 1 new user
 * message) with a warm estimator: the common no-op path, and a forced compaction whose
 * summarize port answers at once.
 */

const SIZES = [100, 1_000, 10_000] as const;
const MODEL_ID = "fake:sim";
const WINDOW_TOKENS = 8_192;
/** Messages after the watermark: the keep window a compaction leaves behind. */
const KEEP_WINDOW_MESSAGES = 20;
/** …and at most this share of the trigger, so the next turn takes the no-op path. */
const KEEP_WINDOW_MAX_SHARE = 0.6;
/** Timed batches; the median batch's mean per call is reported. */
const BATCHES = 9;
/** Each batch runs about this long. */
const BATCH_TARGET_MS = 150;
const WARMUP_MS = 500;
/** Above this ratio of the 10,000- to the 100-message time, the no-op path grows with history. */
const GROWTH_LIMIT = 3;
const SEED = 0x7e1e_0001;

type FoldUIMessage = import("@/lib/message/ui-message").FoldUIMessage;
type MessageStats = import("@/lib/message/stats").MessageStats;
type Part = FoldUIMessage["parts"][number];
type Tier1Input = import("@/lib/compaction/tier1").Tier1Input;

function text(random: () => number, minWords: number, maxWords: number): string {
  const count = minWords + Math.floor(random() * (maxWords - minWords + 1));
  return words(random, count).join(" ");
}

function stats(random: () => number, viewVersion: number, contextTokens: number): MessageStats {
  const output = 20 + Math.floor(random() * 280);
  const startedAt = 1_700_000_000_000;
  return {
    model: MODEL_ID,
    inputTokens: contextTokens,
    outputTokens: output,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    contextTokens,
    lastStepOutputTokens: output,
    estimatedInputTokens: contextTokens,
    steps: 1,
    viewVersion,
    viewCapTokens: null,
    startedAt,
    firstTokenAt: startedAt + 300,
    finishedAt: startedAt + 2_000,
    finishReason: "stop",
  };
}

/** One stored turn pair's assistant reply: text, sometimes a fetch_url call first or a trace. */
function assistantMessage(
  random: () => number,
  n: number,
  viewVersion: number,
  headings: readonly string[],
): FoldUIMessage {
  const parts: Part[] = [];
  if (random() < 0.1) {
    parts.push({
      type: "tool-compact_context",
      toolCallId: `compact-${n}`,
      state: "output-available",
      input: { reason: "threshold", tokensBefore: 4700, messages: 12, startedAt: 0 },
      output: {
        outcome: "summarized",
        reason: "threshold",
        tokensBefore: 4700,
        tokensAfter: 2400,
        savedPct: 48.9,
        messagesSummarized: 12,
        summarizerModel: MODEL_ID,
        durationMs: 900,
        summary: `## ${headings[0]}\n- keep going`,
        note: null,
      },
    });
  }
  parts.push({ type: "step-start" });
  if (random() < 1 / 6) {
    const chars = Math.round(
      Math.exp(Math.log(200) + random() * (Math.log(20_000) - Math.log(200))),
    );
    const page = text(random, 40, 4_000).slice(0, chars);
    parts.push({
      type: "tool-fetch_url",
      toolCallId: `call-${n}`,
      state: "output-available",
      input: { url: `https://example.org/pages/${n}.html` },
      output: {
        url: `https://example.org/pages/${n}.html`,
        finalUrl: `https://example.org/pages/${n}.html`,
        status: 200,
        contentType: "text/html",
        title: text(random, 3, 8),
        text: page,
        truncated: false,
      },
    });
    parts.push({ type: "step-start" });
  }
  parts.push({ type: "text", text: text(random, 15, 220) });
  return {
    id: `a-${n}`,
    role: "assistant",
    parts,
    metadata: { stats: stats(random, viewVersion, 3_000) },
  };
}

function userMessage(random: () => number, n: number): FoldUIMessage {
  const count = Math.round(Math.exp(Math.log(10) + random() * (Math.log(400) - Math.log(10))));
  return {
    id: `u-${n}`,
    role: "user",
    parts: [{ type: "text", text: `Turn ${n}: ${words(random, count).join(" ")}` }],
  };
}

/**
 * A summary of realistic size, ~700 tokens: a narrative under Fold's six headings, then the
 * reference ledger Fold keeps for 12 paths the user gave, rendered by Fold itself.
 */
function summaryText(random: () => number, product: Product): string {
  const narrative = product.headings.map(
    (h) => `## ${h}\n${Array.from({ length: 4 }, () => `- ${text(random, 8, 20)}`).join("\n")}`,
  );
  const references = Array.from({ length: 12 }, (_, i) => `/srv/fold/data/run-${i}.log`);
  const span: FoldUIMessage[] = [
    { id: "u-refs", role: "user", parts: [{ type: "text", text: references.join("\n") }] },
  ];
  const ledger = product.renderLedger(product.mergeLedger([], span, [1]));
  return product.joinSummary(narrative.join("\n"), ledger);
}

type Scenario = {
  size: number;
  input: Tier1Input;
  afterMessages: number;
  afterTokens: number;
};

/** Fold's own definitions the histories are built with, loaded after LOG_LEVEL is set. */
type Product = {
  headings: readonly string[];
  mergeLedger: typeof import("@/lib/compaction/ledger").mergeLedger;
  renderLedger: typeof import("@/lib/compaction/ledger").renderLedger;
  joinSummary: typeof import("@/lib/compaction/ledger").joinSummary;
  summaryMessage: typeof import("@/lib/compaction/view").summaryMessage;
  settings: typeof import("@/lib/env").COMPACTION_DEFAULTS;
};

async function scenario(
  size: number,
  deps: {
    estimator: import("@/lib/context/tokens").TokenEstimator;
    budget: import("@/lib/context/budget").Budget;
    overheadTokens: number;
    product: Product;
  },
): Promise<Scenario> {
  const random = createRandom(SEED + size);
  const version = 40;
  const history: FoldUIMessage[] = [];
  for (let n = 0; history.length < size; n++) {
    history.push(userMessage(random, n));
    if (history.length < size)
      history.push(assistantMessage(random, n, version - 1, deps.product.headings));
  }
  // The stored history ends with a reply. The watermark leaves about 20 messages after it,
  // starting at a user turn, and no more than a realistic share of the trigger: what a
  // compaction's keep window grows into before the next one.
  if (history.at(-1)?.role !== "assistant") history.pop();
  const afterCap = Math.floor(KEEP_WINDOW_MAX_SHARE * deps.budget.trigger);
  let watermarkIndex = history.length - 1;
  let grown = 0;
  for (let i = history.length - 1; i > 0 && history.length - 1 - i < KEEP_WINDOW_MESSAGES; i--) {
    grown += deps.estimator.estimateUIMessages([history[i] as FoldUIMessage]);
    if (grown > afterCap) break;
    if (history[i]?.role === "user") watermarkIndex = i - 1;
  }
  const watermark = history[watermarkIndex]?.id ?? null;
  const summary = summaryText(random, deps.product);
  const state = { summary, watermark, dirty: false, version };

  // The last reply was sent this view at this version: its real count is the view's size.
  const after = history.slice(watermarkIndex + 1);
  const { summaryMessage } = deps.product;
  const afterTokens = deps.estimator.estimateUIMessages(after);
  const viewTokens =
    deps.overheadTokens + deps.estimator.estimateUIMessages([summaryMessage(summary), ...after]);
  const last = history.at(-1);
  if (last?.metadata?.stats) last.metadata.stats = stats(random, version, viewTokens);

  const next: FoldUIMessage = {
    id: `u-next-${size}`,
    role: "user",
    parts: [{ type: "text", text: `Turn next: ${text(random, 30, 120)}` }],
  };
  return {
    size,
    afterMessages: after.length,
    afterTokens,
    input: {
      history: [...history, next],
      state,
      budget: deps.budget,
      overheadTokens: deps.overheadTokens,
      ratio: 1,
      modelId: MODEL_ID,
      estimator: deps.estimator,
      keepRecentToolResults: deps.product.settings.keepRecentToolResults,
      ledgerShare: deps.product.settings.ledgerShare,
      summarize: async ({ previousSummary }) => ({
        summary: `${previousSummary ?? ""}\n- folded`,
        model: MODEL_ID,
        inputTokens: 0,
      }),
      fallback: () => "fallback",
    },
  };
}

/** Mean ms per call of the median batch, after a warm-up. */
async function timeCalls(fn: () => Promise<unknown> | unknown): Promise<number> {
  const warmEnd = performance.now() + WARMUP_MS;
  let calls = 0;
  while (performance.now() < warmEnd) {
    await fn();
    calls++;
  }
  const perCall = WARMUP_MS / Math.max(1, calls);
  const iterations = Math.max(1, Math.round(BATCH_TARGET_MS / perCall));
  const means: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const start = performance.now();
    for (let i = 0; i < iterations; i++) await fn();
    means.push((performance.now() - start) / iterations);
  }
  return percentile(means, 50);
}

/** Three significant digits: these are microsecond-scale times. */
function round3(ms: number): number {
  return Number(ms.toPrecision(3));
}

export const benchmark: Benchmark = {
  name: "tier1",
  async run(context) {
    process.env.LOG_LEVEL = "silent";
    const { runTier1 } = await import("@/lib/compaction/tier1");
    const { splitAtWatermark } = await import("@/lib/compaction/view");
    const { computeBudget } = await import("@/lib/context/budget");
    const { COMPACTION_DEFAULTS } = await import("@/lib/env");
    const { createEstimator } = await import("@/lib/context/tokens");
    const { chatRequestFrame } = await import("@/lib/ai/request-frame");
    const { SUMMARY_HEADINGS } = await import("@/lib/compaction/prompts");
    const { joinSummary, mergeLedger, renderLedger } = await import("@/lib/compaction/ledger");
    const { summaryMessage } = await import("@/lib/compaction/view");
    const product: Product = {
      headings: SUMMARY_HEADINGS,
      mergeLedger,
      renderLedger,
      joinSummary,
      summaryMessage,
      settings: COMPACTION_DEFAULTS,
    };

    const estimator = createEstimator();
    const budget = computeBudget(
      { contextWindow: WINDOW_TOKENS, maxOutputTokens: null },
      COMPACTION_DEFAULTS,
    );
    const { overheadTokens } = await chatRequestFrame(new Date(0));

    const figures: Figures = {};
    const noop = new Map<number, number>();
    const splits = new Map<number, number>();
    for (const size of SIZES) {
      const s = await scenario(size, { estimator, budget, overheadTokens, product });
      const first = await runTier1(s.input);
      if (first.kind !== "noop") {
        throw new Error(
          `${size} messages: expected the no-op path, got ${first.kind} (projected ${first.projectedTokens}, trigger ${budget.trigger})`,
        );
      }
      const noopMs = await timeCalls(() => runTier1(s.input));
      const splitMs = await timeCalls(() =>
        splitAtWatermark(s.input.history, s.input.state.watermark),
      );
      const forcedInput: Tier1Input = { ...s.input, force: true };
      const forced = await runTier1(forcedInput);
      if (forced.kind !== "compacted") {
        throw new Error(`${size} messages: a forced compaction returned ${forced.kind}`);
      }
      const compactMs = await timeCalls(() => runTier1(forcedInput));
      noop.set(size, noopMs);
      splits.set(size, splitMs);
      figures[`tier1.cpu_ms_${size}`] = round3(noopMs);
      figures[`tier1.compact_cpu_ms_${size}`] = round3(compactMs);
      context.note(
        `tier1.cpu_ms_${size}`,
        `ms; no-op runTier1, median of ${BATCHES} batches; ${s.afterMessages} messages after the watermark (${s.afterTokens} tokens), projected ${first.projectedTokens} < trigger ${budget.trigger}; splitAtWatermark alone ${round3(splitMs)} ms`,
      );
      context.note(
        `tier1.compact_cpu_ms_${size}`,
        `ms; forced runTier1, summarize port instant; folds ${forced.draft.messagesSummarized} messages, ${forced.draft.tokensBefore}→${forced.draft.tokensAfter} tokens`,
      );
    }
    const small = noop.get(100) ?? 0;
    const large = noop.get(10_000) ?? 0;
    const growth = small > 0 ? large / small : 0;
    const splitShare = large > 0 ? (splits.get(10_000) ?? 0) / large : 0;
    figures["tier1.noop_growth_ratio"] = Math.round(growth * 100) / 100;
    context.note(
      "tier1.noop_growth_ratio",
      growth > GROWTH_LIMIT
        ? `no-op time grows with stored history: O(n) in splitAtWatermark (history.findIndex + slices), run twice per turn (buildView and splitAfter for the hard-wall floor); the two calls are ~${Math.round(2 * splitShare * 100)} % of the 10,000-message no-op`
        : `10,000- ÷ 100-message no-op time; flat (≤ ${GROWTH_LIMIT}); splitAtWatermark (O(n) findIndex) is ${Math.round(splitShare * 100)} % of the 10,000-message no-op per call`,
    );
    return figures;
  },
};
