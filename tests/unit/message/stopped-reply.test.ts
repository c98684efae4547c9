import { describe, expect, it } from "vitest";
import type { TraceOutput } from "@/lib/compaction/trace";
import { RETRY_MARKER_TYPE } from "@/lib/message/retry-marker";
import { foldEntry, keptOfStopped } from "@/lib/message/stopped-reply";
import type { FoldUIMessage } from "@/lib/message/ui-message";

type Part = FoldUIMessage["parts"][number];

const trace = (outcome: TraceOutput["outcome"]): Part =>
  ({
    type: "tool-compact_context",
    toolCallId: `compact-${outcome}`,
    state: "output-available",
    input: { reason: "threshold", tokensBefore: 3000, messages: 6, startedAt: 1 },
    output: {
      outcome,
      reason: "threshold",
      tokensBefore: 3000,
      tokensAfter: outcome === "summarized" || outcome === "fallback" ? 1000 : 3000,
      savedPct: 0,
      messagesSummarized: 6,
      summarizerModel: null,
      durationMs: 10,
      summary: null,
      note: null,
    },
  }) as Part;
const running: Part = {
  type: "tool-compact_context",
  toolCallId: "compact-running",
  state: "input-available",
  input: { reason: "threshold", tokensBefore: 3000, messages: 6, startedAt: 1 },
} as Part;
const text = (value: string): Part => ({ type: "text", text: value });
const toolCall = (state: "input-available" | "output-available"): Part =>
  ({
    type: "tool-web_fetch",
    toolCallId: `call-${state}`,
    state,
    input: { url: "https://example.com" },
    ...(state === "output-available" ? { output: "page" } : {}),
  }) as Part;

describe("keptOfStopped", () => {
  it("keeps a reply that wrote something, without the tool calls cut off before their result", () => {
    const kept = keptOfStopped([
      trace("summarized"),
      text("Half of it"),
      toolCall("input-available"),
    ]);
    expect(kept).toEqual({ kind: "reply", parts: [trace("summarized"), text("Half of it")] });
    expect(keptOfStopped([toolCall("output-available")]).kind).toBe("reply");
    expect(keptOfStopped([{ type: "reasoning", text: "Thinking" }]).kind).toBe("reply");
    expect(
      keptOfStopped([{ type: "file", mediaType: "image/png", url: "data:image/png;base64,AA" }])
        .kind,
    ).toBe("reply");
  });

  it("keeps nothing of a reply stopped before it wrote anything, a compaction stopped before it folded included", () => {
    expect(keptOfStopped([])).toEqual({ kind: "nothing" });
    expect(keptOfStopped([text("  ")])).toEqual({ kind: "nothing" });
    expect(keptOfStopped([running])).toEqual({ kind: "nothing" });
    for (const outcome of ["stopped", "skipped", "conflict", "failed"] as const) {
      expect(keptOfStopped([trace(outcome)])).toEqual({ kind: "nothing" });
    }
    // A tool call cut off before its result is nothing to keep either.
    expect(keptOfStopped([toolCall("input-available")])).toEqual({ kind: "nothing" });
  });

  it("keeps the trace of a fold stored before the stop, when the reply wrote nothing", () => {
    expect(keptOfStopped([trace("summarized")])).toEqual({
      kind: "fold",
      parts: [trace("summarized")],
    });
    expect(keptOfStopped([trace("fallback"), toolCall("input-available")])).toEqual({
      kind: "fold",
      parts: [trace("fallback")],
    });
  });

  it("counts only the answer: a step the window cut before a retry marker is not something written", () => {
    const cut: Part[] = [
      trace("summarized"),
      { type: "step-start" },
      text("Cut short"),
      { type: RETRY_MARKER_TYPE, data: { reason: "length", keepsSteps: false } } as Part,
    ];
    expect(keptOfStopped(cut)).toEqual({ kind: "fold", parts: [trace("summarized")] });
  });
});

describe("foldEntry", () => {
  it("is a compaction's timeline entry under the reply's id", () => {
    expect(foldEntry("a1", [trace("summarized")])).toEqual({
      id: "a1",
      role: "assistant",
      parts: [trace("summarized")],
      metadata: { compaction: true },
    });
  });
});
