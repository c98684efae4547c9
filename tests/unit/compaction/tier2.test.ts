import type { ModelMessage, PrepareStepFunction, ToolSet } from "ai";
import { describe, expect, it, vi } from "vitest";
import { createTier2, type Tier2Options } from "@/lib/compaction/tier2";
import { pinnedTextOf } from "@/lib/compaction/trim";
import { summaryMessage } from "@/lib/compaction/view";
import { type Budget, computeBudget } from "@/lib/context/budget";
import { createEstimator, type TokenEstimator } from "@/lib/context/tokens";
import { DEFAULT_RATIOS } from "./histories";

/**
 * Tier 2 (DESIGN §9): the prepareStep hook. Under the trigger it costs
 * nothing; over it, the step's messages are trimmed in memory toward the
 * target; a trim that cannot save anything is not repeated.
 */

const WINDOW = 8192;
const BUDGET: Budget = computeBudget(
  { contextWindow: WINDOW, maxOutputTokens: null },
  DEFAULT_RATIOS,
);
const OVERHEAD = 300;

type StepInput = Parameters<PrepareStepFunction<ToolSet>>[0];
type Step = StepInput["steps"][number];

const VOCABULARY = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];

function filler(chars: number, seed: number): string {
  const words: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    const word = `${VOCABULARY[(i * 5 + seed) % VOCABULARY.length]}${(i * 3 + seed) % 17}`;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(" ").slice(0, chars);
}

/** A user request and `steps` tool steps, each an assistant call and a `tool` result. */
function toolLoop(
  steps: number,
  resultChars: number | ((step: number) => number),
  history = 0,
): ModelMessage[] {
  const messages: ModelMessage[] = [];
  // Earlier turns (text only): what Tier 1 already sized.
  for (let i = 0; i < history; i++) {
    messages.push({ role: "user", content: `Earlier question ${i}: ${filler(600, i)}` });
    messages.push({ role: "assistant", content: [{ type: "text", text: filler(600, i + 50) }] });
  }
  messages.push({ role: "user", content: "Read the pages and summarize them." });
  for (let i = 0; i < steps; i++) {
    const toolCallId = `call_${i}`;
    const chars = typeof resultChars === "number" ? resultChars : resultChars(i);
    messages.push({
      role: "assistant",
      content: [
        {
          type: "tool-call",
          toolCallId,
          toolName: "fetch_url",
          input: { url: `https://example.com/${i}` },
        },
      ],
    });
    messages.push({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId,
          toolName: "fetch_url",
          output: { type: "text", value: filler(chars, i) },
        },
      ],
    });
  }
  return messages;
}

/** What a finished step tells Tier 2: only its usage is read. */
function step(inputTokens: number, outputTokens = 40): Step {
  return {
    usage: {
      inputTokens,
      inputTokenDetails: {
        noCacheTokens: inputTokens,
        cacheReadTokens: undefined,
        cacheWriteTokens: undefined,
      },
      outputTokens,
      outputTokenDetails: { textTokens: outputTokens, reasoningTokens: undefined },
      totalTokens: inputTokens + outputTokens,
    },
  } as unknown as Step;
}

function stepInput(steps: Step[], messages: ModelMessage[]): StepInput {
  return {
    steps,
    stepNumber: steps.length,
    messages,
    initialMessages: [],
    responseMessages: [],
  } as unknown as StepInput;
}

function tier2(estimator: TokenEstimator, overrides: Partial<Tier2Options> = {}) {
  const onTrim = vi.fn();
  const prepare = createTier2<ToolSet>({
    budget: BUDGET,
    ratio: 1,
    overheadTokens: OVERHEAD,
    estimator,
    keepRecentToolResults: 3,
    onTrim,
    ...overrides,
  });
  return { prepare, onTrim };
}

/** A recovery Tier 2 hears of once, at its next step (as model-call.ts hands it over). */
function recoveryOnce(event: { tokensBefore: number; reportedTokens: number | null }) {
  let pending: typeof event | null = event;
  return () => {
    const taken = pending;
    pending = null;
    return taken;
  };
}

function trailingToolMessages(messages: ModelMessage[]): ModelMessage[] {
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  return messages.slice(lastAssistant + 1);
}

/** Every tool call keeps exactly one result with its id, later in the list. */
function expectPairsIntact(messages: ModelMessage[]): void {
  messages.forEach((message, at) => {
    if (typeof message.content === "string") return;
    for (const part of message.content) {
      if (part.type !== "tool-call") continue;
      const results = messages.flatMap((m, index) =>
        typeof m.content === "string"
          ? []
          : m.content.flatMap((p) =>
              p.type === "tool-result" && p.toolCallId === part.toolCallId ? [index] : [],
            ),
      );
      expect(results).toHaveLength(1);
      expect(results[0]).toBeGreaterThan(at);
    }
  });
}

describe("Tier 2 under the trigger", () => {
  it("does nothing on the first step (Tier 1 sized it) and never tokenizes", async () => {
    const estimator = createEstimator();
    const { prepare, onTrim } = tier2(estimator);
    const messages = toolLoop(0, 0, 20);
    expect(await prepare(stepInput([], messages))).toBeUndefined();
    expect(estimator.stats.tokenizerCalls).toBe(0);
    expect(onTrim).not.toHaveBeenCalled();
  });

  it("returns undefined and tokenizes only the new tool results", async () => {
    const estimator = createEstimator();
    const { prepare, onTrim } = tier2(estimator);
    // A long history plus two tool steps; the last step's real input was small.
    const messages = toolLoop(2, 1_500, 12);
    const result = await prepare(stepInput([step(1200), step(1800)], messages));
    expect(result).toBeUndefined();
    expect(onTrim).not.toHaveBeenCalled();

    // Exactly the tokenizer work of counting the trailing tool message, nothing more.
    const reference = createEstimator();
    reference.estimateModelMessages(trailingToolMessages(messages));
    expect(reference.stats.tokenizerCalls).toBe(1);
    expect(estimator.stats.tokenizerCalls).toBe(reference.stats.tokenizerCalls);
  });
});

describe("Tier 2 over the trigger", () => {
  it("returns trimmed messages whose estimate (with overhead) is within the target", async () => {
    const estimator = createEstimator();
    const { prepare, onTrim } = tier2(estimator);
    const messages = toolLoop(6, 6_000);
    const counter = createEstimator();
    const beforeTokens = counter.estimateModelMessages(messages);
    expect(beforeTokens + OVERHEAD).toBeGreaterThan(BUDGET.trigger);

    // The previous step's real input was already near the trigger; the new result pushes it over.
    const result = await prepare(stepInput([step(BUDGET.trigger - 500)], messages));
    if (!result?.messages) throw new Error("expected trimmed messages");
    const afterTokens = counter.estimateModelMessages(result.messages);
    expect(afterTokens + OVERHEAD).toBeLessThanOrEqual(BUDGET.target);
    expect(afterTokens).toBeLessThan(beforeTokens);

    // Shrunk, never dropped: same messages, same parts, calls still paired with results.
    expect(result.messages).toHaveLength(messages.length);
    expect(result.messages.map((m) => m.role)).toEqual(messages.map((m) => m.role));
    expectPairsIntact(result.messages);
    expect(result.messages[0]).toEqual(messages[0]);

    expect(onTrim).toHaveBeenCalledTimes(1);
    expect(onTrim.mock.calls[0]?.[0]).toMatchObject({ stepNumber: 1 });
  });

  it("folds a long loop's earlier steps before it cuts the chat's summary", async () => {
    const estimator = createEstimator();
    const { prepare } = tier2(estimator);
    const summary = summaryMessage(`## Decisions & facts\n- ${filler(4_000, 7)}\n- END-OF-SUMMARY`);
    const summaryText = summary.parts[0]?.type === "text" ? summary.parts[0].text : "";
    // Forty steps: even cut to the smallest cap, each call and its result take room.
    const messages: ModelMessage[] = [
      { role: "user", content: summaryText },
      ...toolLoop(40, 3_000),
    ];
    const result = await prepare(stepInput([step(BUDGET.trigger + 2_000)], messages));
    if (!result?.messages) throw new Error("expected trimmed messages");
    const counter = createEstimator();
    expect(counter.estimateModelMessages(result.messages) + OVERHEAD).toBeLessThanOrEqual(
      BUDGET.target,
    );
    // The summary is whole; the earlier steps went into a note instead.
    expect(result.messages[0]).toEqual(messages[0]);
    expect(result.messages.length).toBeLessThan(messages.length);
    expectPairsIntact(result.messages);
  });

  it("trims the step after a recovery, though that step's usage counts the trimmed prompt", async () => {
    const messages = toolLoop(6, 6_000);
    // The provider refused step 1's request and recovery trimmed it in the call only: step 1's
    // usage is of the trimmed prompt, far under the trigger; the messages are still untrimmed.
    const { prepare } = tier2(createEstimator(), {
      takeRecovery: recoveryOnce({ tokensBefore: 5_000, reportedTokens: null }),
    });
    const result = await prepare(stepInput([step(1_000)], messages));
    if (!result?.messages) throw new Error("expected trimmed messages");
    expect(createEstimator().estimateModelMessages(result.messages) + OVERHEAD).toBeLessThanOrEqual(
      BUDGET.target,
    );
    // Without a recovery since, the same usage says nothing needs trimming.
    expect(await prepare(stepInput([step(1_000)], messages))).toBeUndefined();
  });

  it("after a refusal, trims by the provider's count of the refused prompt", async () => {
    const messages = toolLoop(6, 6_000);
    const counter = createEstimator();
    const estimated = counter.estimateModelMessages(messages);
    // The provider counted half again what Fold estimated.
    const reported = Math.ceil(1.5 * (estimated + OVERHEAD));
    const { prepare } = tier2(createEstimator(), {
      takeRecovery: recoveryOnce({ tokensBefore: estimated, reportedTokens: reported }),
    });
    const result = await prepare(stepInput([step(1_000)], messages));
    if (!result?.messages) throw new Error("expected trimmed messages");
    const after = counter.estimateModelMessages(result.messages);
    expect(after + OVERHEAD).toBeLessThanOrEqual(Math.floor(BUDGET.target / 1.5));
  });

  it("applies the calibrated ratio: raw tokens shrink to target / ratio", async () => {
    const estimator = createEstimator();
    const ratio = 1.4;
    const { prepare } = tier2(estimator, { ratio });
    const messages = toolLoop(6, 6_000);
    const result = await prepare(stepInput([step(BUDGET.trigger)], messages));
    if (!result?.messages) throw new Error("expected trimmed messages");
    const after = createEstimator().estimateModelMessages(result.messages);
    expect(Math.ceil((after + OVERHEAD) * ratio)).toBeLessThanOrEqual(BUDGET.target);
  });

  it("without usage, projects from its own estimate and still trims", async () => {
    const estimator = createEstimator();
    const { prepare } = tier2(estimator);
    const messages = toolLoop(6, 6_000);
    const noUsage = {
      usage: { inputTokens: undefined, outputTokens: undefined },
    } as unknown as Step;
    const result = await prepare(stepInput([noUsage], messages));
    expect(result?.messages).toBeDefined();
  });

  it("repeats a trim that saved enough on the next step", async () => {
    const estimator = createEstimator();
    const { prepare, onTrim } = tier2(estimator);
    const first = await prepare(stepInput([step(BUDGET.trigger)], toolLoop(6, 6_000)));
    expect(first?.messages).toBeDefined();
    const second = await prepare(
      stepInput([step(BUDGET.trigger), step(BUDGET.trigger)], toolLoop(7, 6_000)),
    );
    expect(second?.messages).toBeDefined();
    expect(onTrim).toHaveBeenCalledTimes(2);
  });

  it("does not repeat a stalled trim (saved < 5 %) on the next step", async () => {
    const estimator = createEstimator();
    const { prepare, onTrim } = tier2(estimator);
    // Only small results: nothing to elide or cut, yet the provider's count is over the trigger.
    const small = toolLoop(4, 200);
    const first = await prepare(stepInput([step(BUDGET.trigger + 200)], small));
    expect(onTrim).toHaveBeenCalledTimes(1);
    const info = onTrim.mock.calls[0]?.[0] as { before: number; after: number };
    expect(info.after).toBeGreaterThan(info.before * 0.95);
    expect(first?.messages).toEqual(small);

    const callsBefore = estimator.stats.tokenizerCalls;
    const second = await prepare(
      stepInput([step(BUDGET.trigger + 200), step(BUDGET.trigger + 400)], toolLoop(5, 200)),
    );
    expect(second).toBeUndefined();
    expect(onTrim).toHaveBeenCalledTimes(1);
    // A stalled Tier 2 costs nothing for the rest of the turn.
    expect(estimator.stats.tokenizerCalls).toBe(callsBefore);
  });
});

/** A 32k window's budget: a pinned message can be over its target and well inside its input budget. */
const WIDE: Budget = computeBudget(
  { contextWindow: 32_768, maxOutputTokens: null },
  DEFAULT_RATIOS,
);

describe("Tier 2 in a chat whose fold trigger was raised for a pinned message", () => {
  it("keeps the pinned message whole when folding the loop's steps makes room within the input budget", async () => {
    const est = createEstimator();
    // A pinned message larger than the target but well within the input budget.
    const pinnedText = `PINNED SPEC: ${filler(4 * (WIDE.target + 1500), 3)} END-OF-SPEC`;
    const pinnedTokens = est.estimateModelMessages([{ role: "user", content: pinnedText }]);
    expect(pinnedTokens).toBeGreaterThan(WIDE.target);
    expect(pinnedTokens + OVERHEAD + 2000).toBeLessThan(WIDE.inputBudget);
    // foldTrigger (projection.ts) keeps the gap above the floor.
    const floor = pinnedTokens + WIDE.summaryBudget;
    const raised = Math.min(WIDE.inputBudget, floor + WIDE.trigger - WIDE.target);
    const messages: ModelMessage[] = [
      { role: "user", content: pinnedText },
      { role: "assistant", content: [{ type: "text", text: "Noted." }] },
      { role: "user", content: "Now check the pages against the spec." },
    ];
    for (let i = 0; i < 12; i++) {
      messages.push({
        role: "assistant",
        content: [
          {
            type: "tool-call",
            toolCallId: `c${i}`,
            toolName: "fetch_url",
            input: { url: `https://example.com/${i}` },
          },
        ],
      });
      messages.push({
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: `c${i}`,
            toolName: "fetch_url",
            output: { type: "text", value: filler(2400, i) },
          },
        ],
      });
    }
    const { prepare } = tier2(est, {
      budget: { ...WIDE, trigger: raised },
      pinned: { texts: new Set([pinnedTextOf(messages[0] as never)]), toolCallIds: new Set() },
    });
    const result = await prepare(stepInput([step(raised + 200)], messages));
    if (!result?.messages) throw new Error("expected a trim");
    // The pinned message is never shortened while the loop's own steps can make room.
    const sent = result.messages[0]?.content as string;
    expect(sent.length).toBe(pinnedText.length);
    expect(est.estimateModelMessages(result.messages) + OVERHEAD).toBeLessThanOrEqual(raised);
  });
});

/** Reasoning text of the messages after the latest user message (the loop running). */
function loopReasoningChars(messages: readonly ModelMessage[]): number {
  const lastUser = messages.findLastIndex((m) => m.role === "user");
  return messages.slice(lastUser + 1).reduce((sum, message) => {
    if (typeof message.content === "string") return sum;
    return (
      sum +
      message.content.reduce((n, part) => n + (part.type === "reasoning" ? part.text.length : 0), 0)
    );
  }, 0);
}

describe("Tier 2 in a loop that thinks aloud", () => {
  /** A loop whose steps each reason at length before a small call (DeepSeek, Qwen 3, Claude). */
  function thinkingLoop(steps: number, reasoningChars: number): ModelMessage[] {
    return toolLoop(steps, 300).map((message, i) =>
      message.role === "assistant" && typeof message.content !== "string"
        ? {
            ...message,
            content: [{ type: "reasoning", text: filler(reasoningChars, i) }, ...message.content],
          }
        : message,
    ) as ModelMessage[];
  }

  it("folds the earlier steps' reasoning the provider counts, and does not give up on the loop", async () => {
    const estimator = createEstimator();
    const { prepare } = tier2(estimator);
    const messages = thinkingLoop(10, 3_000);
    // Roughly 10 × 750 tokens of reasoning sent back: the provider counts it over the trigger.
    const first = await prepare(stepInput([step(BUDGET.trigger + 500)], messages));
    if (!first?.messages) throw new Error("expected folded messages");
    const kept = loopReasoningChars(first.messages);
    expect(kept).toBeLessThan(loopReasoningChars(messages) / 2);
    // The newest step still has its own reasoning: a provider needs the last step's thinking.
    const newest = first.messages.findLast((m) => m.role === "assistant");
    expect(loopReasoningChars(newest ? [newest] : [])).toBe(3_000);
    expectPairsIntact(first.messages);

    // The next step is trimmed again (not marked stalled because the thinking was not seen).
    const next = thinkingLoop(11, 3_000);
    const second = await prepare(
      stepInput([step(BUDGET.trigger + 500), step(BUDGET.trigger + 1_200)], next),
    );
    expect(second?.messages).toBeDefined();
    expect(loopReasoningChars(second?.messages ?? next)).toBeLessThan(loopReasoningChars(next) / 2);
  });
});

describe("Tier 2 with no older tool results kept (COMPACTION_KEEP_RECENT_TOOL_RESULTS=0)", () => {
  it("still sends the results the model just fetched whole, and makes room from the older ones", async () => {
    const { prepare } = tier2(createEstimator(), { keepRecentToolResults: 0 });
    // Three older pages take the loop over the trigger; the newest is small.
    const messages = toolLoop(4, (i) => (i < 3 ? 6_000 : 2_000));
    const result = await prepare(stepInput([step(BUDGET.trigger + 200)], messages));
    if (!result?.messages) throw new Error("expected trimmed messages");
    const newest = trailingToolMessages(result.messages);
    expect(newest).toEqual(trailingToolMessages(messages));
    expect(JSON.stringify(result.messages)).toContain("omitted");
  });
});
