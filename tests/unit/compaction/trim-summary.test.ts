import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { FOLDED_STEPS_MARKER, trimToFit } from "@/lib/compaction/trim";
import { summaryMessage } from "@/lib/compaction/view";
import { createEstimator } from "@/lib/context/tokens";

/** The summary is the memory of everything folded: in-memory trimming cuts it last. */

const estimator = createEstimator();
const estimate = (messages: ModelMessage[]) => estimator.estimateModelMessages(messages);
const words = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => `${tag}${i % 97}`).join(" ");

function conversation(summaryWords: number): ModelMessage[] {
  const summary = summaryMessage(
    `## Decisions & facts\n- ${words(summaryWords, "fact")}\n- END-OF-SUMMARY`,
  );
  const summaryText = summary.parts[0]?.type === "text" ? summary.parts[0].text : "";
  return [
    { role: "user", content: summaryText },
    { role: "assistant", content: words(6_000, "reply") },
    { role: "user", content: "And now?" },
  ];
}

describe("trimToFit and the summary", () => {
  it("cuts the other messages and leaves the summary whole when that is enough", () => {
    const messages = conversation(2_500);
    const summaryTokens = estimate([messages[0] as ModelMessage]);
    const result = trimToFit(messages, {
      limitTokens: summaryTokens + 1_500,
      keepRecentToolResults: 2,
      estimate,
      force: true,
    });
    expect(result.fits).toBe(true);
    expect(result.messages[0]).toEqual(messages[0]);
    expect(String(result.messages[1]?.content).length).toBeLessThan(
      String(messages[1]?.content).length,
    );
  });

  it("cuts the summary too when nothing fits without it", () => {
    const messages = conversation(2_500);
    const result = trimToFit(messages, { limitTokens: 600, keepRecentToolResults: 2, estimate });
    expect(result.fits).toBe(true);
    expect(String(result.messages[0]?.content).length).toBeLessThan(
      String(messages[0]?.content).length,
    );
  });
});

describe("trimToFit and pinned messages", () => {
  const pinned = `Constraint: ${words(1_500, "rule")} END-OF-PIN`;
  const messages: ModelMessage[] = [
    { role: "user", content: [{ type: "text", text: pinned }] },
    { role: "assistant", content: words(6_000, "reply") },
    { role: "user", content: "And now?" },
  ];
  const limitTokens = estimate([messages[0] as ModelMessage]) + 1_500;

  it("cuts the other messages and leaves a pinned one whole when that is enough", () => {
    const result = trimToFit(messages, {
      limitTokens,
      keepRecentToolResults: 2,
      estimate,
      force: true,
      pinnedTexts: new Set([pinned]),
    });
    expect(result.fits).toBe(true);
    expect(result.messages[0]).toEqual(messages[0]);
    expect(String(result.messages[1]?.content).length).toBeLessThan(
      String(messages[1]?.content).length,
    );
  });

  it("cuts an unpinned message of the same size like any other", () => {
    const result = trimToFit(messages, {
      limitTokens,
      keepRecentToolResults: 2,
      estimate,
      force: true,
    });
    expect(JSON.stringify(result.messages[0]).length).toBeLessThan(
      JSON.stringify(messages[0]).length,
    );
  });
});

describe("trimToFit and a loop's fold note", () => {
  it("spares the note of folded steps while other messages can be cut", () => {
    const note = `${FOLDED_STEPS_MARKER}\n- ${words(1_500, "step")}`;
    const messages: ModelMessage[] = [
      { role: "user", content: "Read the pages." },
      { role: "assistant", content: [{ type: "text", text: note }] },
      { role: "assistant", content: words(6_000, "reply") },
      { role: "user", content: "And now?" },
    ];
    const limitTokens = estimate([messages[1] as ModelMessage]) + 1_500;
    const result = trimToFit(messages, { limitTokens, keepRecentToolResults: 2, estimate });
    expect(result.fits).toBe(true);
    expect(result.messages[1]).toEqual(messages[1]);
  });
});
