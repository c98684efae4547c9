import { convertToModelMessages, type ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { FOLDED_STEPS_MARKER, trimToFit } from "@/lib/compaction/trim";
import { summaryMessage } from "@/lib/compaction/view";
import { createEstimator } from "@/lib/context/tokens";
import { pinnedOf } from "@/lib/message/pins";
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
      pinned: { texts: new Set([pinned]), toolCallIds: new Set() },
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
      pinned: pinnedOf(view),
    });
    expect(result.fits).toBe(true);
    const sent = JSON.stringify(result.messages);
    expect(sent).toContain(plan);
    expect(sent).toContain(after);
    expect(sent).not.toContain(words(6_000, "reply"));
  });
});

describe("trimToFit and a pinned reply's tool calls", () => {
  const pinnedResult = `PINNED-RESULT ${words(600, "price")} END-OF-PINNED-RESULT`;
  const pinnedQuery = `PINNED-QUERY ${words(300, "term")} END-OF-PINNED-QUERY`;
  const otherResult = `OTHER-RESULT ${words(600, "noise")} END-OF-OTHER-RESULT`;
  const lookup = (id: string, query: string, output: string) =>
    ({
      type: "tool-lookup",
      toolCallId: id,
      state: "output-available",
      input: { q: query },
      output,
    }) as const;
  const view = (longReply: string): FoldUIMessage[] => [
    { id: "u1", role: "user", parts: [{ type: "text", text: "Look up the prices." }] },
    {
      id: "a1",
      role: "assistant",
      metadata: { pinned: true },
      parts: [
        { type: "step-start" },
        lookup("c1", pinnedQuery, pinnedResult),
        { type: "step-start" },
        { type: "text", text: "Here are the prices." },
      ],
    },
    { id: "u2", role: "user", parts: [{ type: "text", text: "And the noise?" }] },
    {
      id: "a2",
      role: "assistant",
      parts: [
        { type: "step-start" },
        lookup("c2", "noise", otherResult),
        { type: "step-start" },
        { type: "text", text: longReply },
      ],
    },
    { id: "u3", role: "user", parts: [{ type: "text", text: "And now?" }] },
  ];

  /** `history` as the model gets it, trimmed with its pins to `limitTokens` (see `options`). */
  async function trimmed(
    history: FoldUIMessage[],
    limitTokens: (messages: ModelMessage[]) => number,
    options: { keepRecentToolResults?: number; keepSummary?: boolean } = {},
  ) {
    const messages = await convertToModelMessages(history);
    const result = trimToFit(messages, {
      limitTokens: limitTokens(messages),
      keepRecentToolResults: options.keepRecentToolResults ?? 0,
      estimate,
      force: true,
      keepSummary: options.keepSummary,
      pinned: pinnedOf(history),
    });
    return { fits: result.fits, sent: JSON.stringify(result.messages) };
  }

  it("keeps a pinned reply's tool arguments and result whole where older results are elided", async () => {
    const { sent } = await trimmed(view("Done."), estimate);
    expect(sent).toContain("END-OF-PINNED-RESULT");
    expect(sent).toContain("END-OF-PINNED-QUERY");
    expect(sent).not.toContain("END-OF-OTHER-RESULT");
  });

  it("keeps them whole while capping the other messages is enough", async () => {
    const { fits, sent } = await trimmed(
      view(words(6_000, "reply")),
      (messages) => estimate(messages.slice(0, 3)) + 1_500,
    );
    expect(fits).toBe(true);
    expect(sent).toContain(JSON.stringify(pinnedResult).slice(1, -1));
    expect(sent).toContain("END-OF-PINNED-QUERY");
    expect(sent).not.toContain(words(6_000, "reply"));
  });

  it("cuts them before the pinned words when the summary must stay whole and nothing else is left", async () => {
    const { fits, sent } = await trimmed(
      view("Done."),
      // Room for everything but the two results whole: the other one elided is not enough.
      (messages) => estimate(messages) - estimator.countText(otherResult) - 300,
      { keepSummary: true },
    );
    expect(fits).toBe(true);
    expect(sent).not.toContain(JSON.stringify(pinnedResult).slice(1, -1));
    expect(sent).toContain("Here are the prices.");
  });

  it("keeps the newest unpinned result whole as well, as if the pinned one were not there", async () => {
    const history = view("Done.");
    // The pinned reply last: its call would otherwise take the one place for a recent result.
    const reordered = [history[2], history[3], history[0], history[1], history[4]].filter(
      (message): message is FoldUIMessage => message !== undefined,
    );
    const { sent } = await trimmed(reordered, estimate, { keepRecentToolResults: 1 });
    expect(sent).toContain("END-OF-PINNED-RESULT");
    expect(sent).toContain("END-OF-OTHER-RESULT");
  });

  it("elides them like any other once the reply is no longer pinned", async () => {
    const history = view("Done.").map((message) =>
      message.id === "a1" ? { ...message, metadata: {} } : message,
    );
    const { sent } = await trimmed(history, estimate);
    expect(sent).not.toContain("END-OF-PINNED-RESULT");
  });
});
