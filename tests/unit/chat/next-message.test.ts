import { describe, expect, it } from "vitest";
import { nextMessageTokens } from "@/lib/chat/background-compact";
import { defaultEstimator } from "@/lib/context/tokens";
import type { FoldUIMessage } from "@/lib/message/ui-message";

let ids = 0;
const user = (words: number): FoldUIMessage => ({
  id: `u${ids++}`,
  role: "user",
  parts: [{ type: "text", text: "word ".repeat(words).trim() }],
});
const reply = (): FoldUIMessage => ({
  id: `a${ids++}`,
  role: "assistant",
  parts: [{ type: "text", text: "An answer." }],
});
/** A background compaction's timeline entry: stored as an assistant message, yet no reply. */
const entry = (): FoldUIMessage => ({ ...reply(), metadata: { compaction: true } });

const tokens = (message: FoldUIMessage) => defaultEstimator.estimateUIMessages([message]);

describe("what the next turn is expected to add (the background compaction's look ahead)", () => {
  it("is what the chat's recent turns added, their median: one long paste is not expected again", () => {
    const short = [user(20), user(24), user(22)];
    const paste = user(2_000);
    const history = [short[0], reply(), short[1], reply(), paste, reply()] as FoldUIMessage[];
    expect(nextMessageTokens(history, 1, false)).toBe(tokens(short[1] as FoldUIMessage));
    // Two of three turns long: a long next turn is what to expect.
    const longer = [user(1_500), reply(), user(2_000), reply(), short[2], reply()];
    expect(nextMessageTokens(longer as FoldUIMessage[], 1, false)).toBe(
      tokens(longer[0] as FoldUIMessage),
    );
  });

  it("is nothing for a chat driven by turns that only went on (continue): they add no message", () => {
    const task = user(1_500);
    const history = [task, reply(), reply(), reply(), reply(), reply()];
    expect(nextMessageTokens(history, 1, false)).toBe(0);
  });

  it("counts a turn still unanswered, skips timeline entries, and scales by the ratio", () => {
    const asked = user(40);
    const answered = user(40);
    const history = [answered, reply(), entry(), asked];
    expect(nextMessageTokens(history, 1, false)).toBe(tokens(asked));
    expect(nextMessageTokens([answered, reply(), entry()], 2, false)).toBe(
      defaultEstimator.estimateUIMessages([answered], { ratio: 2 }),
    );
  });

  it("is nothing in an empty chat, and a turn the history shows only in part counts what it shows", () => {
    const only = user(30);
    // History read from a watermark: its first turn began before it.
    expect(nextMessageTokens([only], 1, false)).toBe(tokens(only));
    expect(nextMessageTokens([], 1, true)).toBe(0);
  });

  it("leaves the chat's opening turn out: a long task or pasted document is not expected again", () => {
    const paste = user(2_000);
    const questions = [user(20), user(30)];
    const history = [paste, reply(), questions[0], reply(), questions[1], reply()];
    // The median of the two questions, the mean of the middle two rounded up.
    expect(nextMessageTokens(history as FoldUIMessage[], 1, true)).toBe(
      Math.ceil(questions.map((q) => tokens(q as FoldUIMessage)).reduce((a, b) => a + b) / 2),
    );
    // The same turns read from a watermark: the first of them is one like the others.
    expect(nextMessageTokens(history as FoldUIMessage[], 1, false)).toBe(
      tokens(questions[1] as FoldUIMessage),
    );
  });

  it("expects nothing after the opening turn alone, answered or still running", () => {
    const paste = user(2_000);
    expect(nextMessageTokens([paste, reply()], 1, true)).toBe(0);
    expect(nextMessageTokens([paste], 1, true)).toBe(0);
    expect(nextMessageTokens([paste, reply()], 1, false)).toBe(tokens(paste));
  });
});
