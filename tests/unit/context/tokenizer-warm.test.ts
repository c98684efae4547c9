import { describe, expect, it } from "vitest";
import { tokenizerWarmCounts } from "@/lib/context/tokens";
import { collectGarbage } from "../../helpers/collect";

/**
 * V8 drops a regular expression's compiled code when two full collections pass without it
 * running; the estimator runs its tokenizer once after each full collection so that the turn
 * after them does not compile o200k's split pattern again (tokens.ts).
 */
describe("the tokenizer between turns", () => {
  it("runs once after each full collection, so its pattern stays compiled", async () => {
    const before = tokenizerWarmCounts();
    await collectGarbage(3);
    expect(tokenizerWarmCounts() - before).toBeGreaterThanOrEqual(2);
  });
});
