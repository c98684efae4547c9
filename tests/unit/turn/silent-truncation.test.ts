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

/** Runs the check for a request at the narrow window, counted by the provider about as estimated. */
function checkAtNarrowWindow(history: readonly FoldUIMessage[]) {
  const budget = budgetOf(NARROW);
  const view = viewAt(history, budget);
  const raw = defaultEstimator.classTokensOfUIMessages(view);
  const observed = noObservations();
  const estimated = classTotal(raw);
  observed.estimate = {
    estimatedRawTokens: estimated,
    estimatedRawClasses: raw,
    estimatedTokens: applyRatio(raw, ONES),
  };
  // The provider counts a token fewer than Fold estimated: a fair count, no cut.
  observed.firstStepInputTokens = estimated - 1;
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
  };
  // Recording a cut needs the database; none is given, so one would be logged and returned.
  return checkSilentTruncation(
    {} as never,
    { chatId: "chat", budget: model, compaction, observed },
    () => undefined,
    () => 0,
  );
}

describe("a reply sent at another window", () => {
  it("the request its smaller view makes is no silent cut", async () => {
    expect(await checkAtNarrowWindow(chatAfterReply(WIDE))).toBeNull();
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
    expect(await checkAtNarrowWindow(history)).toMatchObject({ rule: "growth" });
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
