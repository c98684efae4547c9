import { describe, expect, it } from "vitest";
import { type ChunkItem, splitIntoPieces } from "@/lib/compaction/chunking";
import { createEstimator } from "@/lib/context/tokens";

const { countText } = createEstimator();
const item = (text: string): ChunkItem => ({ text, tokens: countText(text) });

describe("splitIntoPieces", () => {
  it("cuts a long message of several blocks between lines, each piece a whole block, in order", () => {
    const lines = (who: string, n: number) =>
      Array.from({ length: n }, (_, i) => `${who} line ${i}: ${"word ".repeat(12)}`);
    const text = [
      "<assistant>",
      ...lines("reply", 60),
      "</assistant>",
      "",
      "<user>",
      ...lines("steer", 60),
      "</user>",
    ].join("\n");
    const items = [item("<user>\nbefore\n</user>"), item(text), item("<user>\nafter\n</user>")];
    expect(splitIntoPieces(items, 1, 400, countText)).toBe(true);
    const pieces = items.slice(1, -1);
    expect(pieces.length).toBeGreaterThan(2);
    for (const [i, piece] of pieces.entries()) {
      expect(piece.tokens).toBeLessThanOrEqual(400);
      expect(
        piece.text.startsWith(`[One long message, part ${i + 1} of ${pieces.length}]\n<`),
      ).toBe(true);
      for (const tag of ["user", "assistant"]) {
        expect(piece.text.split(`<${tag}>`).length).toBe(piece.text.split(`</${tag}>`).length);
      }
    }
    // Every line once, in order, none cut.
    const content = pieces
      .flatMap((piece) => piece.text.split("\n"))
      .filter((line) => / line \d+: /.test(line));
    expect(content).toEqual([...lines("reply", 60), ...lines("steer", 60)]);
    expect(items[0]?.text).toContain("before");
    expect(items.at(-1)?.text).toContain("after");
  });

  it("leaves a message that fits a chunk as it is", () => {
    const items = [item("<user>\nshort\n</user>")];
    expect(splitIntoPieces(items, 0, 400, countText)).toBe(false);
    expect(items).toHaveLength(1);
  });
});
