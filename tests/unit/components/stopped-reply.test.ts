import { describe, expect, it } from "vitest";
import { isEmptyReply, withStoppedReplyAsStored } from "@/components/chat/stopped-reply";
import type { FoldUIMessage } from "@/lib/message/ui-message";

type Part = FoldUIMessage["parts"][number];

const trace = (outcome: "summarized" | "stopped"): Part =>
  ({
    type: "tool-compact_context",
    toolCallId: "compact-a1",
    state: "output-available",
    input: { reason: "threshold", tokensBefore: 3000, messages: 6, startedAt: 1 },
    output: {
      outcome,
      reason: "threshold",
      tokensBefore: 3000,
      tokensAfter: outcome === "summarized" ? 1000 : 3000,
      savedPct: outcome === "summarized" ? 66.7 : 0,
      messagesSummarized: outcome === "summarized" ? 6 : 0,
      summarizerModel: null,
      durationMs: 10,
      summary: null,
      note: null,
    },
  }) as Part;
const user = (id: string): FoldUIMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text: id }],
});
const reply = (parts: Part[], metadata: FoldUIMessage["metadata"] = { stopped: true }) =>
  ({ id: "a1", role: "assistant", parts, metadata }) as FoldUIMessage;

describe("withStoppedReplyAsStored", () => {
  it("takes off a stopped reply that wrote nothing: the message shows unanswered, as a reload shows it", () => {
    const stopped = reply([trace("stopped")]);
    expect(withStoppedReplyAsStored([user("u1"), stopped], stopped)).toEqual([user("u1")]);
    const silent = reply([]);
    expect(withStoppedReplyAsStored([user("u1"), silent], silent)).toEqual([user("u1")]);
  });

  it("keeps the trace of a fold stored before the stop as the fold's entry, in the reply's place", () => {
    const stopped = reply([trace("summarized")]);
    const shown = withStoppedReplyAsStored([user("u1"), stopped, user("u2")], stopped);
    expect(shown).toEqual([
      user("u1"),
      { id: "a1", role: "assistant", parts: [trace("summarized")], metadata: { compaction: true } },
      user("u2"),
    ]);
  });

  it("leaves a stopped reply that wrote something, a reply not stopped, and a list without the reply as they are", () => {
    const written = reply([trace("summarized"), { type: "text", text: "Half" }]);
    const list = [user("u1"), written];
    expect(withStoppedReplyAsStored(list, written)).toBe(list);
    const finished = reply([trace("stopped")], {});
    expect(withStoppedReplyAsStored([user("u1"), finished], finished)).toEqual([
      user("u1"),
      finished,
    ]);
    const gone = reply([]);
    expect(withStoppedReplyAsStored([user("u1")], gone)).toEqual([user("u1")]);
    expect(withStoppedReplyAsStored([user("u1")], user("u1"))).toEqual([user("u1")]);
  });
});

describe("isEmptyReply", () => {
  it("is a begun reply with nothing in it, not a stopped one nor a compaction's entry", () => {
    expect(isEmptyReply(reply([], {}))).toBe(true);
    expect(isEmptyReply(reply([trace("summarized")], {}))).toBe(true);
    expect(isEmptyReply(reply([]))).toBe(false);
    expect(isEmptyReply(reply([{ type: "text", text: "Hi" }], {}))).toBe(false);
    expect(isEmptyReply(reply([trace("summarized")], { compaction: true }))).toBe(false);
    expect(isEmptyReply(user("u1"))).toBe(false);
  });
});
