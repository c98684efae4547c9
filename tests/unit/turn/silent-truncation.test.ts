import { describe, expect, it } from "vitest";
import type { ModelBudget } from "@/lib/chat/budget";
import { projectNextTurn } from "@/lib/compaction/projection";
import { buildView } from "@/lib/compaction/view";
import { type Budget, computeBudget } from "@/lib/context/budget";
import { type ClassRatios, CONTENT_CLASSES, classTotal } from "@/lib/context/content-class";
import { applyRatio, defaultEstimator } from "@/lib/context/tokens";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { noObservations } from "@/lib/turn/observe";
import { checkSilentTruncation } from "@/lib/turn/silent-truncation";
import {
  assistantMessage,
  DEFAULT_RATIOS,
  EMPTY_STATE,
  filler,
  MODEL_ID,
  statsFor,
  userMessage,
} from "../compaction/histories";

/**
 * A model keeps its name while its window shrinks (an admin lowers the override, a local server
 * is reloaded with less context). The smaller window makes older tool results bulky, so the next
 * request sends placeholders for them and is smaller than the last one: that is Fold's own edit,
 * not a server cutting the prompt, and the last reply's count no longer measures this view.
 */

const WIDE = 32_768;
const NARROW = 16_384;
const budgetOf = (contextWindow: number) =>
  computeBudget({ contextWindow, maxOutputTokens: null }, DEFAULT_RATIOS);
const ONES = Object.fromEntries(CONTENT_CLASSES.map((c) => [c, 1])) as ClassRatios;
const rulesOf = (budget: Budget) => ({
  bulkyToolTokens: budget.bulkyToolTokens,
  keepRecentToolResults: 3,
});
const viewAt = (history: readonly FoldUIMessage[], budget: Budget) =>
  buildView({
    history,
    state: EMPTY_STATE,
    rules: rulesOf(budget),
    limitTokens: Number.MAX_SAFE_INTEGER,
    estimator: defaultEstimator,
    knownToFit: true,
  }).messages;

const tools = [0, 1, 2, 3].map((k) => ({
  name: "fetch_url",
  callId: `c${k}`,
  input: { url: `https://example.com/${k}` },
  output: `page ${k}: ${filler(1_000, k)}`,
}));
const opening = [
  userMessage("u1", "read the pages"),
  assistantMessage("a1", { tools, text: "read them" }),
  userMessage("u2", `and then? ${filler(50)}`),
];

/** The chat after a reply sent at `sentAt` tokens of window, counted exactly as Fold estimated. */
function chatAfterReply(sentAt: number): FoldUIMessage[] {
  const sent = defaultEstimator.estimateUIMessages(viewAt(opening, budgetOf(sentAt)));
  const reply = assistantMessage("a2", {
    text: `answer ${filler(200)}`,
    stats: {
      ...statsFor({ contextTokens: sent, lastStepOutputTokens: 202, viewVersion: 0 }),
      contextWindow: sentAt,
    },
  });
  return [...opening, reply, userMessage("u3", `one more ${filler(50)}`)];
}

/**
 * Runs the check for a request at the narrow window, counted by the provider about as estimated
 * (a token fewer; `share` of it for a model that counts less than Fold estimates), or
 * `keptLess` tokens fewer still: a server that dropped that many.
 */
function checkAtNarrowWindow(history: readonly FoldUIMessage[], keptLess = 0, share = 1) {
  const budget = budgetOf(NARROW);
  const view = viewAt(history, budget);
  const raw = defaultEstimator.classTokensOfUIMessages(view);
  const observed = noObservations();
  const estimated = classTotal(raw);
  observed.estimate = {
    estimatedRawTokens: estimated,
    estimatedRawClasses: raw,
    estimatedFrameTokens: 0,
    estimatedTokens: applyRatio(raw, ONES),
  };
  // The provider counts a token fewer than Fold estimated: a fair count, no cut.
  observed.firstStepInputTokens = Math.round(estimated * share) - 1 - keptLess;
  const model: ModelBudget = {
    modelId: MODEL_ID,
    window: { contextWindow: NARROW, maxOutputTokens: null, source: "override" },
    budget,
    ratio: 1,
    classRatios: ONES,
    calibrationSamples: 50,
  };
  const compaction = {
    view,
    viewVersion: 0,
    projectedTokens: estimated,
    trace: null,
    fits: true,
    capTokens: null,
    trigger: model.budget.trigger,
  };
  // Recording a cut needs the database; none is given, so one would be logged and returned.
  return checkSilentTruncation(
    {} as never,
    { chatId: "chat", budget: model, compaction, observed, history },
    () => undefined,
    () => 0,
  );
}

describe("a reply sent at another window", () => {
  /**
   * Both requests below are counted this much short of their estimate: well within the ratio
   * rule's band, beyond what a count about as large as the estimate may miss it by, so only
   * the growth since the last request can tell.
   */
  const SHORT = 300;

  it("the request its smaller view makes is no silent cut", async () => {
    expect(await checkAtNarrowWindow(chatAfterReply(WIDE), SHORT)).toBeNull();
  });

  it("while the same drop at the same window still reads as one", async () => {
    const history = chatAfterReply(NARROW);
    // The last request as sent at the wide window, stored as if the window were the narrow one.
    const wideCount = defaultEstimator.estimateUIMessages(viewAt(opening, budgetOf(WIDE)));
    const last = history[3];
    const stats = last?.metadata?.stats;
    if (!last || !stats) throw new Error("no reply");
    history.splice(3, 1, {
      ...last,
      metadata: { stats: { ...stats, contextTokens: wideCount, inputTokens: wideCount } },
    });
    expect(await checkAtNarrowWindow(history, SHORT)).toMatchObject({ rule: "growth" });
  });

  it("is no measure of the next request's size: the projection estimates the view", () => {
    const history = chatAfterReply(WIDE);
    const budget = budgetOf(NARROW);
    const projected = projectNextTurn({
      history,
      state: EMPTY_STATE,
      budget,
      overheadTokens: 0,
      ratio: 1,
      classRatios: ONES,
      modelId: MODEL_ID,
      estimator: defaultEstimator,
      keepRecentToolResults: 3,
    });
    expect(projected.projectedTokens).toBe(
      defaultEstimator.estimateUIMessages(projected.view.messages, { ratio: ONES }),
    );
  });
});

/**
 * A reply of one step whose own tool results (a turn stopped, or out of tokens, right after its
 * tools ran) are newer than the three kept whole: the next request sends placeholders for
 * results the last one sent whole, so it grows by less than the new messages. That is Stage 0's
 * edit, not a server cutting the prompt. The model counts 15 % less than Fold estimates (fair
 * counts, calibration not there yet), so the count is short of the estimate and only the growth
 * since the last request can tell whether anything was dropped.
 */
const SHARE = 0.85;
describe("a result the last request sent whole, now cut by Stage 0", () => {
  const older = [0, 1, 2].map((k) => ({ ...tools[k], callId: `old${k}` }) as (typeof tools)[0]);
  const newer = [0, 1, 2].map((k) => ({
    name: "fetch_url",
    callId: `new${k}`,
    input: { url: `https://example.com/new/${k}` },
    output: `new page ${k}: ${filler(1_000, k + 10)}`,
  }));
  const before = [
    // A long opening: the count's 15 % short of a large estimate, as a whole request.
    userMessage("u1", `read the pages about this: ${filler(3_000, 99)}`),
    assistantMessage("a1", { tools: older, text: "read them" }),
    userMessage("u2", `and the next ones? ${filler(50)}`),
  ];
  /** The chat after that reply, whose request was counted exactly as Fold estimated it. */
  function chatAfterToolReply(): FoldUIMessage[] {
    const sent = Math.round(
      SHARE * defaultEstimator.estimateUIMessages(viewAt(before, budgetOf(NARROW))),
    );
    const reply = assistantMessage("a2", {
      tools: newer,
      text: "stopped here",
      stats: {
        ...statsFor({ contextTokens: sent, lastStepOutputTokens: 120, viewVersion: 0 }),
        contextWindow: NARROW,
      },
    });
    return [...before, reply, userMessage("u3", `go on ${filler(50)}`)];
  }

  it("sends the older results as placeholders now (the premise)", () => {
    const view = viewAt(chatAfterToolReply(), budgetOf(NARROW));
    const a1 = view.find((m) => m.id === "a1");
    expect(JSON.stringify(a1?.parts)).toContain("omitted");
    const whole = viewAt(before, budgetOf(NARROW)).find((m) => m.id === "a1");
    expect(JSON.stringify(whole?.parts)).not.toContain("omitted");
  });

  it("a fair count of the smaller request is no silent cut", async () => {
    expect(await checkAtNarrowWindow(chatAfterToolReply(), 0, SHARE)).toBeNull();
  });

  it("while a server that dropped part of it is still seen", async () => {
    expect(await checkAtNarrowWindow(chatAfterToolReply(), 200, SHARE)).toMatchObject({
      rule: "growth",
    });
  });
});
