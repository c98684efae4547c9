import { describe, expect, it } from "vitest";
import { answerBegun, toolCallState, wroteSomething } from "@/components/chat/message/tool-state";
import type { FoldUIMessage } from "@/lib/message/ui-message";

const reply = (parts: unknown[]): FoldUIMessage =>
  ({ id: "a1", role: "assistant", parts }) as FoldUIMessage;
const call = (state: string) => ({
  type: "tool-fetch_url",
  toolCallId: "call-1",
  state,
  input: { url: "https://example.com" },
  ...(state === "output-available" ? { output: { text: "page" } } : {}),
});

describe("a tool call in the timeline", () => {
  it("runs while its reply streams, and is cancelled once the reply ended without its result", () => {
    expect(toolCallState("input-streaming", true)).toBe("input-streaming");
    expect(toolCallState("input-available", true)).toBe("input-available");
    expect(toolCallState("input-available", false)).toBe("cancelled");
    expect(toolCallState("input-streaming", false)).toBe("cancelled");
    expect(toolCallState("approval-requested", false)).toBe("cancelled");
  });

  it("shows a result, a failure and a refusal as such, streaming or not", () => {
    for (const streaming of [true, false]) {
      expect(toolCallState("output-available", streaming)).toBe("output-available");
      expect(toolCallState("output-error", streaming)).toBe("output-error");
      expect(toolCallState("output-denied", streaming)).toBe("denied");
    }
  });
});

describe("whether a stopped reply wrote something Continue can go on from", () => {
  it("counts text and finished tool calls, not a call cut off before its result", () => {
    expect(wroteSomething(reply([{ type: "text", text: "Half an answer" }]))).toBe(true);
    expect(wroteSomething(reply([call("output-available")]))).toBe(true);
    // Stored without it (lib/turn/persist.ts): there is nothing to continue.
    expect(wroteSomething(reply([call("input-available")]))).toBe(false);
    expect(wroteSomething(reply([{ type: "text", text: "  " }, call("input-streaming")]))).toBe(
      false,
    );
  });
});

describe("a reply that has only reasoned so far", () => {
  const reasoning = (text: string) => ({ type: "reasoning", text, state: "streaming" });

  it("is still thinking (Thinking… stays): its reasoning, shown or silent, is not an answer", () => {
    expect(answerBegun(reply([{ type: "step-start" }, reasoning("")]))).toBe(false);
    expect(answerBegun(reply([reasoning("Let me check each mirror in turn")]))).toBe(false);
    expect(answerBegun(reply([reasoning("Done."), { type: "text", text: "Mirror 2" }]))).toBe(true);
    expect(answerBegun(reply([reasoning("Fetch it."), call("input-streaming")]))).toBe(true);
  });

  it("has answered once an image model's picture is in, with no words", () => {
    const picture = { type: "file", mediaType: "image/png", url: "data:image/png;base64,AA==" };
    expect(answerBegun(reply([reasoning("Drawing"), picture]))).toBe(true);
    expect(wroteSomething(reply([picture]))).toBe(true);
  });

  it("stopped, offers no Continue: the next request gives the model none of that reasoning", () => {
    expect(wroteSomething(reply([reasoning("First, the mirror at 10.0.0.3 answers in")]))).toBe(
      false,
    );
  });
});
