import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { calibrationText } from "@/components/admin/model-row";
import { CompactionTrace } from "@/components/chat/message/compaction-trace";
import { nextFoldText } from "@/components/context/ring-math";
import { formatShare } from "@/components/stats/format";
import { savedPct, type TraceOutput } from "@/lib/compaction/trace";

/** A number, then a space a line may break at, then "%": "counts 4" would end one line. */
const BREAKABLE_PERCENT = /\d[ \t\n]+%/;

function traceMarkup(tokensBefore: number, tokensAfter: number): string {
  const output: TraceOutput = {
    outcome: "summarized",
    reason: "threshold",
    tokensBefore,
    tokensAfter,
    savedPct: savedPct(tokensBefore, tokensAfter),
    messagesSummarized: 6,
    summarizerModel: null,
    durationMs: 30,
    summary: "A summary.",
    note: null,
  };
  // React's comment markers sit between the pieces of a line: not where it could break.
  return renderToStaticMarkup(createElement(CompactionTrace, { output })).replace(/<!-- -->/g, "");
}

describe("a percent stays on the line of its number", () => {
  it("in the admin's calibration text, in a column a few words wide", () => {
    const text = calibrationText({ ratio: 0.96, samples: 37 });
    expect(text).toContain("counts 4\u00a0% fewer");
    expect(text).not.toMatch(BREAKABLE_PERCENT);
  });

  it("in the ring's line about the next summary", () => {
    const text = nextFoldText({
      compactionEnabled: true,
      compactsNext: false,
      projectedTokens: 3_000,
      contextWindow: 8_192,
      budget: { trigger: 5_407, triggerRaised: false },
    });
    expect(text).toContain("(66\u00a0% of the window)");
    expect(text).not.toMatch(BREAKABLE_PERCENT);
  });

  it("in a compaction's headline", () => {
    const html = traceMarkup(3_780, 2_586);
    expect(html).toContain("(−32\u00a0%)");
    expect(html).not.toMatch(BREAKABLE_PERCENT);
  });

  it("in a message's stats, as before", () => {
    expect(formatShare(3_643, 8_192)).toBe("44\u00a0%");
    expect(formatShare(1, 8_192)).toBe("<1\u00a0%");
  });
});
