import { convertToModelMessages, type ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { FOLDED_STEPS_MARKER, trimToFit } from "@/lib/compaction/trim";
import { summaryMessage } from "@/lib/compaction/view";
import { createEstimator } from "@/lib/context/tokens";
import { pinnedTextsOf } from "@/lib/message/pins";
import type { FoldUIMessage } from "@/lib/message/ui-message";

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

describe("trimToFit and a pinned reply", () => {
  it("spares each step of a reply the user pinned, as sent, while other messages can be cut", async () => {
    const plan = `The agreed plan: ${words(800, "plan")} END-OF-PLAN`;
    const after = `And the budget: ${words(800, "budget")} END-OF-BUDGET`;
    const view: FoldUIMessage[] = [
      { id: "u1", role: "user", parts: [{ type: "text", text: "Plan it." }] },
      {
        id: "a1",
        role: "assistant",
        metadata: { pinned: true },
        parts: [
          { type: "step-start" },
          { type: "text", text: plan },
          {
            type: "tool-lookup",
            toolCallId: "c1",
            state: "output-available",
            input: { q: "prices" },
            output: { ok: true },
          },
          { type: "step-start" },
          { type: "text", text: after },
        ],
      },
      { id: "u2", role: "user", parts: [{ type: "text", text: "Now the long part." }] },
      { id: "a2", role: "assistant", parts: [{ type: "text", text: words(6_000, "reply") }] },
      { id: "u3", role: "user", parts: [{ type: "text", text: "And now?" }] },
    ];
    const messages = await convertToModelMessages(view);
    const pinnedTokens = estimate(messages.slice(1, 4));
    const result = trimToFit(messages, {
      limitTokens: pinnedTokens + 1_500,
      keepRecentToolResults: 2,
      estimate,
      force: true,
      pinnedTexts: pinnedTextsOf(view),
    });
    expect(result.fits).toBe(true);
    const sent = JSON.stringify(result.messages);
    expect(sent).toContain(plan);
    expect(sent).toContain(after);
    expect(sent).not.toContain(words(6_000, "reply"));
  });
});
