import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { CompactionTrace } from "@/components/chat/message/compaction-trace";
import { savedPct, type TraceOutput } from "@/lib/compaction/trace";

function headline(tokensBefore: number, tokensAfter: number, messagesSummarized = 2): string {
  const output: TraceOutput = {
    outcome: "summarized",
    reason: "manual",
    tokensBefore,
    tokensAfter,
    savedPct: savedPct(tokensBefore, tokensAfter),
    messagesSummarized,
    summarizerModel: null,
    durationMs: 1200,
    summary: "A summary.",
    note: null,
  };
  const html = renderToStaticMarkup(createElement(CompactionTrace, { output }));
  // The text of the line, without React's comment markers between its pieces.
  return html
    .replace(/<!-- -->/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ");
}

describe("a finished compaction's headline", () => {
  it("says by how much the context shrank", () => {
    expect(headline(10_000, 2_500)).toContain("10,000 → 2,500 tokens (−75 %)");
  });

  it("says by how much it grew when the summary is longer than what it folded", () => {
    const line = headline(1_000, 1_032);
    expect(line).toContain("1,000 → 1,032 tokens (+3.2 %)");
    expect(line).not.toContain("−-");
  });

  it("shows whole percents from ten on, so neighbouring entries read alike", () => {
    expect(headline(10_000, 3_600)).toContain("(−64 %)");
    expect(headline(10_000, 4_430)).toContain("(−56 %)");
  });

  it("counts the messages it folded in words that agree with the number", () => {
    expect(headline(10_000, 2_500, 1)).toContain("1 message · ");
    expect(headline(10_000, 2_500, 2)).toContain("2 messages · ");
    expect(headline(90_000, 2_500, 1_204)).toContain("1,204 messages · ");
  });

  it("says the same of a compaction still running", () => {
    const running = renderToStaticMarkup(
      createElement(CompactionTrace, { input: { messages: 1 } }),
    ).replace(/<!-- -->/g, "");
    expect(running).toContain("1 message · ");
  });
});
