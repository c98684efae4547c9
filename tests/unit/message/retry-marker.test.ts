import { describe, expect, it } from "vitest";
import { answerParts, RETRY_MARKER_TYPE } from "@/lib/message/retry-marker";
import type { FoldUIMessage } from "@/lib/message/ui-message";

type Part = FoldUIMessage["parts"][number];

const trace = {
  type: "tool-compact_context",
  toolCallId: "trace-1",
  state: "output-available",
  input: {},
  output: { outcome: "summarized" },
} as unknown as Part;
const fetched = {
  type: "tool-fetch_url",
  toolCallId: "call-1",
  state: "output-available",
  input: { url: "https://example.org/a" },
  output: { text: "page a" },
} as unknown as Part;
const step = { type: "step-start" } as Part;
const text = (value: string) => ({ type: "text", text: value }) as Part;
const marker = {
  type: RETRY_MARKER_TYPE,
  data: { reason: "length", keepsSteps: true },
} as unknown as Part;
/** The retry started from the whole view again: the steps before the cut are not the answer's. */
const wholeMarker = {
  type: RETRY_MARKER_TYPE,
  data: { reason: "length", keepsSteps: false },
} as unknown as Part;

describe("the answer of a reply the window cut short", () => {
  it("keeps the traces and the tool steps finished before the cut step, then the retry", () => {
    const parts = [
      trace,
      step,
      fetched,
      step,
      text("ramble ramble"),
      marker,
      step,
      text("Answer."),
    ];
    expect(answerParts(parts)).toEqual([trace, step, fetched, step, text("Answer.")]);
  });

  it("keeps only the traces when the retry started from the whole view again", () => {
    const parts = [trace, step, fetched, step, text("ramble"), wholeMarker, step, text("Answer.")];
    expect(answerParts(parts)).toEqual([trace, step, text("Answer.")]);
  });

  it("keeps only the traces when the window cut the first step", () => {
    const parts = [trace, step, text("ramble"), marker, step, text("Answer.")];
    expect(answerParts(parts)).toEqual([trace, step, text("Answer.")]);
  });

  it("is every part of a reply with no retry", () => {
    const parts = [step, fetched, step, text("Answer.")];
    expect(answerParts(parts)).toEqual(parts);
  });
});
