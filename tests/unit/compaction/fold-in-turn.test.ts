import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { FOLDED_STEPS_MARKER, foldEarlierSteps } from "@/lib/compaction/fold-steps";
import { projectNextTurn } from "@/lib/compaction/projection";
import { runTier1, type Tier1Result } from "@/lib/compaction/tier1";
import { SUMMARY_MESSAGE_ID } from "@/lib/compaction/view";
import { createEstimator } from "@/lib/context/tokens";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import {
  assistantMessage,
  EMPTY_STATE,
  filler,
  nextState,
  statsFor,
  tier1Harness,
  userMessage,
  viewTokens,
} from "./histories";

/**
 * DESIGN §16: folding also works inside one long turn. A real agent turn is one
 * user instruction and then many tool steps; Tier 1 must be able to fold the
 * earlier steps of it, Tier 2 the earlier steps of a live loop, and neither may
 * ever drop the user's instruction.
 */

const INSTRUCTION = `Fix the failing importer in /srv/app/importer.py. ${filler(400)}`;

/** One user instruction, then `n` stored steps: a bash call (~115-token arguments) and ~900 tokens of output. */
function agentTurn(n: number): FoldUIMessage[] {
  const history: FoldUIMessage[] = [userMessage("u1", INSTRUCTION)];
  for (let i = 0; i < n; i++) {
    history.push(
      assistantMessage(`s${i}`, {
        tools: [
          {
            name: "bash",
            callId: `call-${i}`,
            input: { command: `grep -rn step${i} /srv/app/module_${i}.py ${filler(100, i)}` },
            output: `output of step ${i}: ${filler(900, i + 1)}`,
          },
        ],
        text: `Step ${i} done.`,
      }),
    );
  }
  return history;
}

function expectCompacted(result: Tier1Result): Extract<Tier1Result, { kind: "compacted" }> {
  if (result.kind !== "compacted") throw new Error(`expected a compaction, got ${result.kind}`);
  return result;
}

describe("folding inside one long turn", () => {
  it("folds the earlier steps of a stored tool loop and keeps the user's instruction verbatim", async () => {
    const h = tier1Harness();
    const history = agentTurn(22);
    const result = expectCompacted(await runTier1(h.input(history, EMPTY_STATE)));

    // The span reaches past the latest user message: the turn's earlier steps are folded.
    const folded = h.summarizer.calls[0]?.span.map((m) => m.id) ?? [];
    expect(folded).toContain("u1");
    expect(folded).toContain("s0");
    expect(result.next.watermark).not.toBe("u1");
    // The view: the summary, the instruction pinned right after it, then the newest steps.
    const view = result.view.messages;
    expect(view[0]?.id).toBe(SUMMARY_MESSAGE_ID);
    expect(view[1]?.id).toBe("u1");
    expect(view[1]?.parts).toEqual([{ type: "text", text: INSTRUCTION }]);
    expect(view.at(-1)?.id).toBe("s21");
    expect(result.view.fits).toBe(true);
    expect(viewTokens(result.view, h.estimator)).toBeLessThanOrEqual(h.budget.target);

    // The next turn of the loop sends the same shape: the pinned instruction is stable.
    const state = nextState(EMPTY_STATE, result);
    const again = projectNextTurn({ ...h.input(history, state) });
    expect(again.view.messages[1]?.id).toBe("u1");
  });

  it("reaches the target with the hard wall when the newest step is too big, and records the cap", async () => {
    const h = tier1Harness();
    const history = agentTurn(12);
    history.push(
      assistantMessage("s-big", {
        tools: [
          {
            name: "bash",
            callId: "call-big",
            input: { command: "cat /srv/app/huge.log" },
            output: `huge log: ${filler(3_000, 9)}`,
          },
        ],
      }),
    );
    const result = expectCompacted(await runTier1(h.input(history, EMPTY_STATE)));
    expect(result.view.messages.at(-1)?.id).toBe("s-big");
    expect(result.projectedTokens).toBeLessThanOrEqual(h.budget.target);
    expect(result.view.hardWallCapTokens).not.toBeNull();
    // The user's instruction and the summary are never cut.
    expect(result.view.messages[1]?.parts).toEqual([{ type: "text", text: INSTRUCTION }]);
    expect(JSON.stringify(result.view.messages[0])).not.toContain("chars cut to fit");
  });

  it("caps old tool-call arguments like old tool results", async () => {
    const h = tier1Harness();
    const history = agentTurn(6);
    // Arguments larger than a bulky result (a file written through the tool, say).
    for (const message of history) {
      for (const part of message.parts) {
        if ("input" in part && part.input && typeof part.input === "object")
          (part.input as { content?: string }).content = filler(400, 3);
      }
    }
    const { view } = projectNextTurn(h.input(history, EMPTY_STATE));
    const inputs = view.messages.flatMap((m) =>
      m.parts.flatMap((p) => ("input" in p ? [JSON.stringify(p.input)] : [])),
    );
    const newest = inputs.at(-1) ?? "";
    const oldest = inputs[0] ?? "";
    expect(newest).toContain("grep -rn step5");
    expect(oldest.length).toBeLessThan(newest.length);
    expect(oldest).toContain("chars cut to fit the context window");
  });

  it("floors the projection when a stored turn's usage is far below its content", () => {
    const h = tier1Harness();
    const history = agentTurn(6);
    // The stored reply claims a tiny request (a provider that cut, or a bad count).
    const last = history.at(-1) as FoldUIMessage;
    last.metadata = {
      stats: statsFor({ contextTokens: 50, lastStepOutputTokens: 5, viewVersion: 0 }),
    };
    history.push(userMessage("u2", "and now?"));
    const { view, projectedTokens } = projectNextTurn(h.input(history, EMPTY_STATE));
    expect(projectedTokens).toBeGreaterThan(0);
    expect(projectedTokens).toBeGreaterThanOrEqual(viewTokens(view, h.estimator));
  });
});

describe("folding inside a live tool loop (Tier 2's last resort)", () => {
  const estimator = createEstimator();
  const estimate = (list: ModelMessage[]) => estimator.estimateModelMessages(list);

  /** A live loop in ModelMessages: the user's instruction, then `n` calls with their results. */
  function liveLoop(n: number): ModelMessage[] {
    const messages: ModelMessage[] = [{ role: "user", content: INSTRUCTION }];
    for (let i = 0; i < n; i++) {
      messages.push({
        role: "assistant",
        content: [
          {
            type: "tool-call",
            toolCallId: `call-${i}`,
            toolName: "bash",
            input: { command: `cat /srv/app/module_${i}.py` },
          },
        ],
      });
      messages.push({
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: `call-${i}`,
            toolName: "bash",
            output: { type: "text", value: `module ${i} sha 3f9c2a${i}b1 ${filler(200, i)}` },
          },
        ],
      });
    }
    return messages;
  }

  it("folds the earliest steps into a note until the loop fits, keeping the instruction and the newest step", () => {
    const loop = liveLoop(60);
    const limitTokens = 3_000;
    const result = foldEarlierSteps(loop, {
      limitTokens,
      noteTokens: 600,
      estimate,
      countText: (t) => estimator.countText(t),
    });
    expect(result.before).toBeGreaterThan(limitTokens);
    expect(result.after).toBeLessThanOrEqual(limitTokens);
    expect(result.folded).toBeGreaterThan(0);
    expect(result.messages[0]).toEqual(loop[0]);
    const note = result.messages[1];
    const noteText = JSON.stringify(note?.content);
    expect(noteText).toContain(FOLDED_STEPS_MARKER.slice(1, 30));
    // The note lists the folded calls' arguments and keeps the values they carried.
    expect(noteText).toMatch(/bash .*module_\d+\.py/);
    expect(noteText).toContain(`/srv/app/module_${result.folded - 1}.py`);
    expect(result.messages.at(-1)).toEqual(loop.at(-1));
    // Every remaining call still has its result.
    const calls = result.messages.flatMap((m) =>
      Array.isArray(m.content) ? m.content.filter((p) => p.type === "tool-call") : [],
    );
    const results = result.messages.flatMap((m) =>
      Array.isArray(m.content) ? m.content.filter((p) => p.type === "tool-result") : [],
    );
    expect(calls.map((c) => c.toolCallId)).toEqual(results.map((r) => r.toolCallId));
  });

  it("extends its own earlier note when the loop has to fold again", () => {
    const options = {
      limitTokens: 3_000,
      noteTokens: 600,
      estimate,
      countText: (t: string) => estimator.countText(t),
    };
    const first = foldEarlierSteps(liveLoop(30), options);
    const grown = [...first.messages, ...liveLoop(60).slice(61)];
    const second = foldEarlierSteps(grown, options);
    expect(second.after).toBeLessThanOrEqual(options.limitTokens);
    const notes = second.messages.filter((m) =>
      JSON.stringify(m.content).includes("folded by Fold"),
    );
    expect(notes).toHaveLength(1);
  });

  it("leaves a loop with a single step alone", () => {
    const loop = liveLoop(1);
    const result = foldEarlierSteps(loop, {
      limitTokens: 10,
      noteTokens: 5,
      estimate,
      countText: (t) => estimator.countText(t),
    });
    expect(result.folded).toBe(0);
    expect(result.messages).toEqual(loop);
  });
});
