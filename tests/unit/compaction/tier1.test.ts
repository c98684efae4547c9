import { describe, expect, it } from "vitest";
import { splitSummary } from "@/lib/compaction/ledger";
import { runTier1, type Tier1Result } from "@/lib/compaction/tier1";
import { buildView, SUMMARY_MESSAGE_ID } from "@/lib/compaction/view";
import { computeBudget } from "@/lib/context/budget";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import {
  assistantMessage,
  DEFAULT_RATIOS,
  EMPTY_STATE,
  exchange,
  FALLBACK_DIGEST,
  filler,
  ids,
  isPlaceholderOutput,
  KEEP_RECENT_TOOL_RESULTS,
  keptMessages,
  nextState,
  OVERHEAD_TOKENS,
  replyWithUsage,
  SUMMARIZER_MODEL,
  SUMMARY_HEADINGS,
  statsFor,
  summaryText,
  tier1Harness,
  userMessage,
  viewTokens,
} from "./histories";

/** n exchanges of the given size followed by the pending user message `u<n+1>`. */
function chat(n: number, spec = { userTokens: 60, textTokens: 300 }): FoldUIMessage[] {
  const history: FoldUIMessage[] = [];
  for (let i = 1; i <= n; i++) history.push(...exchange(i, spec));
  history.push(userMessage(`u${n + 1}`, `question ${n + 1}: ${filler(spec.userTokens)}`));
  return history;
}

function expectCompacted(result: Tier1Result): Extract<Tier1Result, { kind: "compacted" }> {
  if (result.kind !== "compacted") throw new Error(`expected a compaction, got ${result.kind}`);
  return result;
}

function summaryOf(messages: readonly FoldUIMessage[]): string | null {
  const first = messages[0];
  if (first?.id !== SUMMARY_MESSAGE_ID) return null;
  const part = first.parts[0];
  return part?.type === "text" ? part.text : null;
}

describe("Tier 1 (DESIGN §8)", () => {
  it("is a no-op under the trigger: no summarizer call, the view is the history", async () => {
    const h = tier1Harness();
    const history = chat(3);

    const result = await runTier1(h.input(history, EMPTY_STATE));

    expect(result.kind).toBe("noop");
    expect(result.projectedTokens).toBeLessThan(h.budget.trigger);
    expect(h.summarizer.calls).toHaveLength(0);
    expect(result.view.messages).toEqual(history);
  });

  it("lets Stage 0 alone keep a chat with old bulky tool results under the trigger", async () => {
    const h = tier1Harness();
    // Six ~3,000-token results over three turns (18k tokens: twice the window), then three small ones.
    const history: FoldUIMessage[] = [
      ...exchange(1, { userTokens: 30, toolTokens: [3000, 3000], textTokens: 60 }),
      ...exchange(2, { userTokens: 30, toolTokens: [3000, 3000], textTokens: 60 }),
      ...exchange(3, { userTokens: 30, toolTokens: [3000, 3000], textTokens: 60 }),
      ...exchange(4, { userTokens: 30, toolTokens: [40, 40, 40], textTokens: 60 }),
      userMessage("u5", "what did the last three queries say?"),
    ];
    const stored = structuredClone(history);

    const result = await runTier1(h.input(history, EMPTY_STATE));

    expect(result.kind).toBe("noop");
    expect(h.summarizer.calls).toHaveLength(0);
    expect(result.projectedTokens).toBeLessThan(h.budget.trigger);
    const outputs = new Map<string, unknown>();
    for (const m of result.view.messages) {
      for (const p of m.parts)
        if ("toolCallId" in p && "output" in p) outputs.set(p.toolCallId, p.output);
    }
    for (const callId of ["c1-0", "c1-1", "c2-0", "c2-1", "c3-0", "c3-1"]) {
      const original = stored
        .flatMap((m) => m.parts)
        .find((p) => "toolCallId" in p && p.toolCallId === callId);
      const chars = original && "output" in original ? String(original.output).length : -1;
      const tool = callId.endsWith("-0") ? "fetch_url" : "run_query";
      expect(outputs.get(callId)).toBe(
        `[tool result for ${tool} omitted: ${chars.toLocaleString("en-US")} chars; call the tool again if needed]`,
      );
    }
    for (const callId of ["c4-0", "c4-1", "c4-2"]) {
      expect(isPlaceholderOutput(outputs.get(callId))).toBe(false);
    }
    expect(history).toEqual(stored); // the stored history is never edited
  });

  it("lets Stage 0 count when the last reply's real usage still held a result now replaced", async () => {
    const h = tier1Harness();
    const history: FoldUIMessage[] = [];
    let state = EMPTY_STATE;
    // Three small turns, then a turn that read one large page and ran three small queries.
    const replies = [
      { textTokens: 290 },
      { textTokens: 290 },
      { textTokens: 290 },
      { toolTokens: [2800, 40, 40, 40], textTokens: 150 },
    ];
    for (const [i, reply] of replies.entries()) {
      const n = i + 1;
      history.push(userMessage(`u${n}`, `question ${n}: ${filler(40, n)}`));
      const result = await runTier1(h.input(history, state));
      expect(result.kind).toBe("noop");
      state = nextState(state, result);
      history.push(replyWithUsage(n, reply, result.view, state.version, h.estimator));
    }
    history.push(userMessage("u5", "thanks, and the second query?"));
    // That turn's last request stayed under the trigger (Tier 2 had no reason to edit it),
    // but with its answer and the new question the real-usage projection crosses it.
    const lastUsage = history.at(-2)?.metadata?.stats;
    expect(lastUsage?.contextTokens).toBeLessThan(h.budget.trigger);
    expect(
      (lastUsage?.contextTokens ?? 0) + (lastUsage?.lastStepOutputTokens ?? 0),
    ).toBeGreaterThanOrEqual(h.budget.trigger);

    // Stage 0 now replaces the large page (three newer results follow it): the view is small.
    const stage0 = buildView({
      history,
      state,
      rules: {
        bulkyToolTokens: h.budget.bulkyToolTokens,
        keepRecentToolResults: KEEP_RECENT_TOOL_RESULTS,
      },
      limitTokens: h.budget.inputBudget - OVERHEAD_TOKENS,
      estimator: h.estimator,
    });
    const page = stage0.messages
      .flatMap((m) => m.parts)
      .find((p) => "toolCallId" in p && p.toolCallId === "c4-0");
    expect(page && "output" in page && isPlaceholderOutput(page.output)).toBe(true);
    expect(viewTokens(stage0, h.estimator)).toBeLessThan(h.budget.target);

    const result = await runTier1(h.input(history, state));

    // So nothing needs folding: the projection must describe this view, not the last request.
    expect(result.kind).toBe("noop");
    expect(result.projectedTokens).toBeLessThan(h.budget.trigger);
    expect(h.summarizer.calls).toHaveLength(0);
  });

  it("does not fire again on the turns right after a compaction (hysteresis)", async () => {
    const h = tier1Harness();
    const history: FoldUIMessage[] = [];
    let state = EMPTY_STATE;
    const spec = { textTokens: 300 };
    let compaction: Extract<Tier1Result, { kind: "compacted" }> | null = null;
    let n = 1;
    for (; n <= 40 && !compaction; n++) {
      history.push(userMessage(`u${n}`, `question ${n}: ${filler(60, n)}`));
      const result = await runTier1(h.input(history, state));
      if (result.kind === "compacted") compaction = result;
      else expect(result.kind).toBe("noop");
      state = nextState(state, result);
      history.push(replyWithUsage(n, spec, result.view, state.version, h.estimator));
    }
    if (!compaction) throw new Error("the chat never reached the trigger");

    expect(compaction.projectedTokens).toBeLessThanOrEqual(h.budget.target);
    expect(state.version).toBe(1);
    const lastReply = history.at(-1)?.metadata?.stats;
    expect(lastReply?.contextTokens).toBe(compaction.projectedTokens);
    expect(lastReply?.viewVersion).toBe(1);

    // The next normal turns project from real usage and stay under the trigger.
    for (let k = 0; k < 3; k++, n++) {
      history.push(userMessage(`u${n}`, `question ${n}: ${filler(60, n)}`));
      const result = await runTier1(h.input(history, state));
      expect(result.kind).toBe("noop");
      history.push(replyWithUsage(n, spec, result.view, state.version, h.estimator));
    }
    expect(h.summarizer.calls).toHaveLength(1);
  });

  it("sends each stored message to the summarizer once, chaining the previous summary", async () => {
    const h = tier1Harness();
    const history: FoldUIMessage[] = [userMessage("u0", "hello")];
    let state = EMPTY_STATE;
    let previousSummary: string | null = null;
    let n = 1;
    for (let round = 0; round < 20; round++) {
      // Answer the pending question, then several more exchanges and a new question.
      history.push(exchange(n - 1, { userTokens: 0, textTokens: 200 })[1]);
      const exchanges = round % 2 === 0 ? 3 : 9;
      for (let k = 0; k < exchanges; k++, n++) {
        history.push(...exchange(n, { userTokens: 60, toolTokens: [80], textTokens: 300 }));
      }
      history.push(userMessage(`u${n}`, `question ${n}`));
      n++;

      const force = round % 2 === 0;
      const result = expectCompacted(await runTier1(h.input(history, state, { force })));

      expect(h.summarizer.calls).toHaveLength(round + 1);
      // The summarizer gets the previous narrative; the ledger is Fold's and travels beside it.
      expect(h.summarizer.calls[round]?.previousSummary).toBe(
        previousSummary === null ? null : splitSummary(previousSummary).narrative,
      );
      expect(result.draft.watermarkFrom).toBe(state.watermark);
      previousSummary = result.next.summary;
      state = nextState(state, result);
    }

    const sent = h.summarizer.calls.flatMap((call) => ids(call.span));
    expect(new Set(sent).size).toBe(sent.length);
    const covered = history.slice(0, history.findIndex((m) => m.id === state.watermark) + 1);
    expect(sent).toEqual(ids(covered));
    expect(state.version).toBe(20);
  });

  it("drops a summary whose watermark no longer exists and treats the chat as dirty", async () => {
    const h = tier1Harness();
    const history = chat(2);
    const state = {
      summary: summaryText("stale"),
      watermark: "deleted-message",
      dirty: false,
      version: 3,
    };

    const result = await runTier1(h.input(history, state));

    expect(result.kind).toBe("skipped"); // not the fast path: the stale state is settled
    expect(result.view.watermarkMissing).toBe(true);
    expect(result.view.summary).toBeNull();
    expect(result.view.messages.some((m) => m.id === SUMMARY_MESSAGE_ID)).toBe(false);
    expect(result.view.messages).toEqual(history);
  });

  it("settles a dirty chat with nothing to fold as skipped, without calling the summarizer", async () => {
    const h = tier1Harness();
    const history = chat(1);

    const result = await runTier1(h.input(history, { ...EMPTY_STATE, dirty: true }));

    expect(result.kind).toBe("skipped");
    if (result.kind !== "skipped") return;
    expect(result.draft.outcome).toBe("skipped");
    expect(result.draft.messagesSummarized).toBe(0);
    expect(h.summarizer.calls).toHaveLength(0);
    expect(result.view.messages).toEqual(history);
  });

  it("falls back to the deterministic digest when the summarizer fails, and the turn proceeds", async () => {
    const h = tier1Harness({ summarizerFails: new Error("provider down") });
    const history = chat(16);

    const result = expectCompacted(await runTier1(h.input(history, EMPTY_STATE)));

    expect(h.summarizer.calls).toHaveLength(1);
    expect(h.fallback.calls).toHaveLength(1);
    expect(ids(h.fallback.calls[0]?.span ?? [])).toEqual(ids(h.summarizer.calls[0]?.span ?? []));
    expect(h.fallback.calls[0]?.budgetTokens).toBe(h.budget.summaryBudget);
    expect(result.draft.outcome).toBe("fallback");
    expect(result.draft.summarizerModel).toBeNull();
    // The trace gets a short cause; the raw error text is the shell's to log.
    expect(result.draft.note).toContain("fallback digest used: the summarizer failed");
    expect(result.draft.note).not.toContain("provider down");
    expect(result.next.summary).toBe(FALLBACK_DIGEST);
    expect(summaryOf(result.view.messages)).toContain(FALLBACK_DIGEST);
    expect(result.view.fits).toBe(true);
  });

  it("records the summarizer's model and puts its summary at the head of the view", async () => {
    const h = tier1Harness();
    const result = expectCompacted(await runTier1(h.input(chat(16), EMPTY_STATE)));

    expect(result.draft.outcome).toBe("summarized");
    expect(result.draft.summarizerModel).toBe(SUMMARIZER_MODEL);
    const summary = summaryOf(result.view.messages) ?? "";
    expect(summary).toContain("<conversation-summary>");
    for (const heading of SUMMARY_HEADINGS) expect(summary).toContain(heading);
  });

  it("folds everything before the keep window when forced, even under the trigger", async () => {
    const h = tier1Harness();
    const history = chat(8);
    const unforced = await runTier1(h.input(history, EMPTY_STATE));
    expect(unforced.kind).toBe("noop"); // the chat is under the trigger

    const result = expectCompacted(await runTier1(h.input(history, EMPTY_STATE, { force: true })));

    const span = h.summarizer.calls[0]?.span ?? [];
    const kept = keptMessages(result.view.messages);
    expect([...ids(span), ...ids(kept)]).toEqual(ids(history));
    expect(kept[0]?.role).toBe("user");
    expect(result.next.watermark).toBe(span.at(-1)?.id);
    // The keep window is as large as keepRecent allows: one more user turn would not fit.
    expect(h.estimator.estimateUIMessages(kept)).toBeLessThanOrEqual(h.budget.keepRecent);
    const previousTurn = span.findLastIndex((m) => m.role === "user");
    expect(h.estimator.estimateUIMessages([...span.slice(previousTurn), ...kept])).toBeGreaterThan(
      h.budget.keepRecent,
    );
  });

  it("says the view does not fit when the latest user message is larger than the window", async () => {
    const h = tier1Harness();
    const huge = userMessage("u3", filler(10_000));
    const history = [...chat(2).slice(0, -1), huge];

    const result = await runTier1(h.input(history, EMPTY_STATE));

    expect(result.view.fits).toBe(false);
    expect(result.view.messages.at(-1)).toEqual(huge); // the current message is never cut
  });
});

describe("Tier 1: a compaction whose target no cap reaches", () => {
  it("cuts nothing, so what no summary holds goes out whole on the turns after it", async () => {
    const h = tier1Harness();
    const history: FoldUIMessage[] = [];
    for (let i = 1; i <= 6; i++) history.push(...exchange(i, { userTokens: 60, textTokens: 400 }));
    // A pasted document: with the summary, over the target on its own.
    const doc = `Here is my config, fix line 40: ${filler(2_500)} MIDDLE-MARKER ${filler(200, 3)}`;
    history.push(userMessage("u7", doc));

    const folded = await runTier1(h.input(history, EMPTY_STATE));
    expect(folded.kind).toBe("compacted");
    if (folded.kind !== "compacted") return;
    expect(folded.view.hardWallCapTokens).toBeNull();
    // Not summarized: the document is after the new watermark.
    expect(folded.next.summary).not.toContain("MIDDLE-MARKER");

    // Its reply, stored with what its turn sent, and the next question about the document.
    const [, reply] = exchange(7, { userTokens: 0, textTokens: 500 });
    const state = nextState(EMPTY_STATE, folded);
    const answered = {
      ...reply,
      metadata: {
        stats: {
          ...statsFor({
            contextTokens: folded.projectedTokens,
            lastStepOutputTokens: 500,
            viewVersion: state.version,
          }),
          ...(folded.view.hardWallCapTokens === null
            ? {}
            : { viewCapTokens: folded.view.hardWallCapTokens }),
        },
      },
    } as FoldUIMessage;
    const next = await runTier1(
      h.input([...history, answered, userMessage("u8", "What is on line 40?")], state),
    );
    const sent = JSON.stringify(next.view.messages.find((m) => m.id === "u7")?.parts);
    expect(sent).toContain("MIDDLE-MARKER");
  });
});

describe("Tier 1: a hard-wall cap an earlier turn applied", () => {
  const WIDE = computeBudget({ contextWindow: 200_000, maxOutputTokens: null }, DEFAULT_RATIOS);
  const longReply = filler(2_000);
  /** u1, a reply whose turn cut the view to 120 tokens a message, and the next question. */
  function cutChat(stats: { model?: string; contextWindow: number }): FoldUIMessage[] {
    return [
      userMessage("u1", "question 1"),
      assistantMessage("a1", {
        text: longReply,
        stats: {
          ...statsFor({ contextTokens: 900, lastStepOutputTokens: 100, viewVersion: 0 }),
          ...stats,
          viewCapTokens: 120,
        },
      }),
      userMessage("u2", "question 2"),
    ];
  }
  const sentText = (result: Tier1Result) =>
    JSON.stringify(result.view.messages.find((m) => m.id === "a1")?.parts);

  it("goes on cutting while the model and its window are the ones it was cut for", async () => {
    const { input } = tier1Harness({ budget: WIDE });
    const result = await runTier1(input(cutChat({ contextWindow: 200_000 }), EMPTY_STATE));
    expect(sentText(result)).not.toContain(longReply);
  });

  it("sends the conversation whole again once the window grew or the model changed", async () => {
    const { input } = tier1Harness({ budget: WIDE });
    for (const stats of [{ contextWindow: 8_192 }, { contextWindow: 200_000, model: "other:m" }]) {
      const result = await runTier1(input(cutChat(stats), EMPTY_STATE));
      expect(result.kind).toBe("noop");
      expect(sentText(result)).toContain(longReply);
      expect(result.view.hardWallCapTokens).toBeNull();
    }
  });
});

describe("Tier 1: a fold that cannot reach the target (DESIGN §7)", () => {
  /**
   * An agent's run: one long task message, then turns that only go on, each adding a step (a
   * tool call and its result). Every fold keeps the task whole beside the summary, so none
   * reaches the target.
   */
  async function agentRun(steps: number) {
    const h = tier1Harness();
    const history: FoldUIMessage[] = [userMessage("task", `Fix the build: ${filler(2_500)}`)];
    let state = EMPTY_STATE;
    const folds: { before: number; after: number; note: string | null }[] = [];
    const checks: { projected: number; kind: Tier1Result["kind"] }[] = [];
    for (let n = 1; n <= steps; n++) {
      const result = await runTier1(h.input(history, state));
      checks.push({ projected: result.projectedTokens, kind: result.kind });
      if (result.kind === "compacted") {
        folds.push({
          before: result.draft.tokensBefore,
          after: result.draft.tokensAfter,
          note: result.draft.note,
        });
      }
      state = nextState(state, result);
      history.push(
        replyWithUsage(
          n,
          { toolTokens: [200], textTokens: 20 },
          result.view,
          state.version,
          h.estimator,
        ),
      );
    }
    return { h, folds, checks, history };
  }

  it("spaces its folds by the budget's gap instead of folding again a step or two later", async () => {
    const { h, folds, history } = await agentRun(60);
    const gap = h.budget.trigger - h.budget.target;
    const step = h.estimator.estimateUIMessages(history.slice(-1));
    expect(folds.length).toBeGreaterThanOrEqual(2);
    for (const fold of folds) {
      expect(fold.after).toBeGreaterThan(h.budget.target);
      // The trace says why, and when the next fold comes.
      expect(fold.note).toMatch(
        /could not reach the target .*: the pinned messages and the latest user message are never folded .* next fold comes at \d+ tokens/,
      );
    }
    // Between two folds the run grows by the gap, less the newest step a fold keeps.
    for (let i = 1; i < folds.length; i++) {
      const grown = (folds[i]?.before ?? 0) - (folds[i - 1]?.after ?? 0);
      expect(grown).toBeGreaterThanOrEqual(gap - step);
    }
  });

  it("sends the run whole past the budget's trigger, and folds before the input budget", async () => {
    const { h, checks } = await agentRun(60);
    const firstFold = checks.findIndex((c) => c.kind === "compacted");
    const sentPastTrigger = checks.filter(
      (c) => c.kind === "noop" && c.projected >= h.budget.trigger,
    );
    expect(sentPastTrigger.length).toBeGreaterThan(0);
    expect(firstFold).toBeGreaterThan(0);
    for (const check of checks) expect(check.projected).toBeLessThanOrEqual(h.budget.inputBudget);
  });
});

describe("Tier 1: a summary written for a larger window than this model's", () => {
  /** A 4,096-token window: input budget 2,868, summary budget 430. */
  const SMALL = computeBudget({ contextWindow: 4_096, maxOutputTokens: null }, DEFAULT_RATIOS);
  /** What a 128k model's fold left: a 3,000-token summary, then one short exchange. */
  const bigSummary = SUMMARY_HEADINGS.map(
    (heading, i) => `${heading}\n- OLD-FACT-${i}: ${filler(495, i)}`,
  ).join("\n");
  const state = { summary: bigSummary, watermark: "a1", dirty: false, version: 4 };
  const history = [
    ...exchange(1, { userTokens: 20, textTokens: 40 }),
    ...exchange(2, { userTokens: 20, textTokens: 40 }),
    userMessage("u3", "and the next step?"),
  ];

  it("shortens the summary on its own when nothing is left to fold, so the turn fits", async () => {
    const h = tier1Harness({ budget: SMALL });
    expect(h.estimator.countText(bigSummary)).toBeGreaterThan(SMALL.inputBudget);

    const result = expectCompacted(await runTier1(h.input(history, state)));

    // The summarizer was asked to shorten the summary alone, within the narrative's budget.
    expect(h.summarizer.calls).toHaveLength(1);
    const call = h.summarizer.calls[0];
    expect(call?.span).toEqual([]);
    expect(call?.previousSummary).toContain("OLD-FACT-5");
    expect(call?.summaryBudget).toBeLessThanOrEqual(SMALL.summaryBudget);
    // The watermark stays where it was; the view fits with the shorter summary at its head.
    expect(result.next.watermark).toBe("a1");
    expect(result.draft.watermarkFrom).toBe("a1");
    expect(result.draft.messagesSummarized).toBe(0);
    expect(h.estimator.countText(result.next.summary)).toBeLessThanOrEqual(SMALL.summaryBudget);
    expect(result.view.fits).toBe(true);
    expect(summaryOf(result.view.messages)).toContain("summary 1");
    expect(keptMessages(result.view.messages).map((m) => m.id)).toEqual(["u2", "a2", "u3"]);
    expect(result.draft.note).toContain("shortened to this model's summary budget");
  });

  it("shortens it when the user asks to compact, and the fallback digest does when no summarizer can", async () => {
    const h = tier1Harness({ budget: SMALL, summarizerFails: new Error("down") });

    const result = expectCompacted(await runTier1(h.input(history, state, { force: true })));

    expect(result.draft.outcome).toBe("fallback");
    expect(h.fallback.calls).toHaveLength(1);
    expect(h.fallback.calls[0]?.span).toEqual([]);
    expect(h.fallback.calls[0]?.previousSummary).toContain("OLD-FACT-0");
    expect(result.next.watermark).toBe("a1");
    expect(result.view.fits).toBe(true);
  });

  it("leaves a summary within this model's budget as it is when nothing is left to fold", async () => {
    const h = tier1Harness({ budget: SMALL });
    const small = { ...state, summary: summaryText("kept as is") };

    const result = await runTier1(h.input(history, small, { force: true }));

    expect(result.kind).toBe("skipped");
    expect(h.summarizer.calls).toHaveLength(0);
    expect(summaryOf(result.view.messages)).toContain("kept as is");
  });
});
