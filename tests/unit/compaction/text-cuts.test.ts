import { describe, expect, it } from "vitest";
import { titleFromMessage } from "@/lib/chat/title";
import { splitIntoPieces } from "@/lib/compaction/chunking";
import { fallbackDigest } from "@/lib/compaction/fallback";
import { cutHeadTail } from "@/lib/compaction/serialize";
import { cutMiddle } from "@/lib/compaction/trim";
import { createEstimator } from "@/lib/context/tokens";
import type { FoldUIMessage } from "@/lib/message/ui-message";

const estimator = createEstimator();
const countTokens = (text: string) => estimator.countText(text);
const graphemes = (s: string) =>
  [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(s)].map((g) => g.segment);

/**
 * Every cut Fold makes of a message's text ends between whole characters: half an emoji (a lone
 * surrogate) is text a provider refuses (Anthropic answers 400 "no low surrogate"), and half a
 * flag or a family shows as another symbol.
 */
describe("Tier 2 / hard-wall cut (cutMiddle) on emoji text", () => {
  it("keeps surrogate pairs whole (a lone surrogate makes Anthropic answer 400 'no low surrogate')", () => {
    const text = `a${"😀".repeat(20_000)}`; // 40,001 UTF-16 units
    const cut = cutMiddle(text, 32_000); // the 8,000-token rung of the ladder
    expect(cut.isWellFormed()).toBe(true);
    // And says how much it cut: what is left plus the count is the whole.
    const count = Number(/\[… ([\d,]+) chars cut/.exec(cut)?.[1]?.replace(/,/g, ""));
    expect(cut.replace(/\n\[…[^\]]*\]\n/, "").length + count).toBe(text.length);
  });
});

describe("summarizer input cut (cutHeadTail) on emoji text", () => {
  it("keeps surrogate pairs whole", () => {
    const text = `a${"😀".repeat(5_000)}`;
    expect(cutHeadTail(text, 2_000).isWellFormed()).toBe(true);
  });
});

describe("fallback digest on emoji text", () => {
  it("cuts requests and the last reply between code points", () => {
    const span: FoldUIMessage[] = [
      { id: "u1", role: "user", parts: [{ type: "text", text: `x${"😀".repeat(300)}` }] },
      {
        id: "a1",
        role: "assistant",
        parts: [{ type: "text", text: `y${"🎉".repeat(400)}` }],
      },
    ];
    const digest = fallbackDigest({
      previousSummary: null,
      span,
      budgetTokens: 4_000,
      countTokens,
    });
    expect(digest).toContain("😀");
    expect(digest.isWellFormed()).toBe(true);
  });
});

describe("chat title cut", () => {
  it("does not split a flag into a lone regional indicator", () => {
    const title = titleFromMessage(`a${"🇯🇵".repeat(20)}`) ?? "";
    expect(title.endsWith("…")).toBe(true);
    const body = title.replace(/…$/, "");
    // every grapheme of the title body is a whole flag (or the leading "a")
    for (const g of graphemes(body).slice(1)) expect(g).toBe("🇯🇵");
  });
  it("does not split a ZWJ family", () => {
    const family = "👨‍👩‍👧‍👦"; // 11 UTF-16 units
    const title = titleFromMessage(family.repeat(10)) ?? "";
    expect(title.endsWith("…")).toBe(true);
    const body = title.replace(/…$/, "");
    for (const g of graphemes(body)) expect(g).toBe(family);
  });
});

describe("a long line read in pieces by the summarizer", () => {
  it("splits it between code points", () => {
    const text = `<user>\nx${"😀".repeat(6_000)}\n</user>`;
    const items = [{ text, tokens: countTokens(text) }];
    expect(splitIntoPieces(items, 0, 1_000, countTokens)).toBe(true);
    expect(items.length).toBeGreaterThan(1);
    for (const item of items) expect(item.text.isWellFormed()).toBe(true);
    expect(items.map((i) => i.text).join("")).toContain("😀".repeat(10));
  });
});
