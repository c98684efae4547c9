import { describe, expect, it } from "vitest";
import { foldFloor, foldTrigger, projectNextTurn } from "@/lib/compaction/projection";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { EMPTY_STATE, exchange, filler, tier1Harness, userMessage } from "./histories";

/** The view the next turn would send, and the input that projected it. */
function projected(history: FoldUIMessage[], pinnedIds?: ReadonlySet<string>) {
  const input = tier1Harness().input(history, EMPTY_STATE, { pinnedIds });
  return { input, view: projectNextTurn(input).view };
}

describe("where a chat folds (DESIGN §7)", () => {
  it("is the budget's trigger while a fold can reach the target", () => {
    const history = [...exchange(1, { userTokens: 60, textTokens: 300 }), userMessage("u2", "ok?")];
    const { input, view } = projected(history);
    expect(foldFloor(input, view)).toBeLessThanOrEqual(input.budget.target);
    expect(foldTrigger(input, view)).toBe(input.budget.trigger);
  });

  it("keeps the budget's gap above what a fold leaves when the latest message keeps it over the target", () => {
    const { budget } = tier1Harness();
    const history = [
      ...exchange(1, { userTokens: 60, textTokens: 300 }),
      userMessage("u2", filler(2_200)),
    ];
    const { input, view } = projected(history);
    const floor = foldFloor(input, view);
    // The frame, a full summary and the message: no fold lands lower.
    expect(floor).toBeGreaterThan(budget.target);
    expect(floor).toBeGreaterThanOrEqual(2_200 + budget.summaryBudget);
    expect(foldTrigger(input, view)).toBe(floor + budget.trigger - budget.target);
    expect(foldTrigger(input, view)).toBeLessThan(budget.inputBudget);
  });

  it("never goes past the input budget", () => {
    const { budget } = tier1Harness();
    const { input, view } = projected([userMessage("u1", filler(3_500))]);
    expect(foldTrigger(input, view)).toBe(budget.inputBudget);
  });

  it("counts what the user pinned, folded or not, as what a fold leaves", () => {
    const history = [
      userMessage("u1", filler(2_200)),
      ...exchange(2, { userTokens: 60, textTokens: 300 }),
      userMessage("u3", "and now?"),
    ];
    const plain = projected(history);
    const pinned = projected(history, new Set(["u1"]));
    expect(foldTrigger(plain.input, plain.view)).toBe(plain.input.budget.trigger);
    expect(foldTrigger(pinned.input, pinned.view)).toBeGreaterThan(pinned.input.budget.trigger);
  });

  it("ahead of a turn, counts the message expected in place of the latest one", () => {
    const { budget } = tier1Harness();
    const history = [...exchange(1, { userTokens: 2_200, textTokens: 300 })];
    const { input, view } = projected(history);
    // Going on (no new message): the long message is still the latest one, kept whole.
    expect(foldTrigger(input, view)).toBeGreaterThan(budget.trigger);
    // A short message next: a fold takes the long one into the summary.
    expect(foldTrigger(input, view, 40)).toBe(budget.trigger);
    // A long one next: it is kept whole in its turn.
    expect(foldTrigger(input, view, 2_200)).toBeGreaterThan(budget.trigger);
  });
});
