import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { tokenizerWarmCounts } from "@/lib/context/tokens";

/**
 * V8 drops a regular expression's compiled code when two full collections pass without it
 * running; the estimator runs its tokenizer once after each full collection so that the turn
 * after them does not compile o200k's split pattern again
 * (tokens.ts).
 */
describe("the tokenizer between turns", () => {
  it("runs once after each full collection, so its pattern stays compiled", async () => {
    setFlagsFromString("--expose-gc");
    const collect = runInNewContext("gc") as () => void;
    const before = tokenizerWarmCounts();
    for (let i = 0; i < 3; i++) {
      collect();
      // GC entries reach observers on a later tick.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(tokenizerWarmCounts() - before).toBeGreaterThanOrEqual(2);
  });
});
