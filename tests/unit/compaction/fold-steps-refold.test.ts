import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { FOLDED_STEPS_MARKER, foldEarlierSteps } from "@/lib/compaction/fold-steps";
import { createEstimator } from "@/lib/context/tokens";

const est = createEstimator();
const opts = (limitTokens: number, noteTokens: number) => ({
  limitTokens,
  noteTokens,
  estimate: (m: ModelMessage[]) => est.estimateModelMessages(m),
  countText: (t: string) => est.countText(t),
});
function stepMessages(i: number): ModelMessage[] {
  return [
    {
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId: `c${i}`, toolName: "lookup", input: { q: `item ${i}` } },
      ],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `c${i}`,
          toolName: "lookup",
          output: {
            type: "text",
            value: `Receipt at https://api.example.com/receipts/R${String(i).padStart(5, "0")} ${"lorem ipsum dolor ".repeat(120)}`,
          },
        },
      ],
    },
  ];
}
/** The fold's note among the messages. */
function noteOf(messages: ModelMessage[]): string {
  for (const message of messages) {
    const parts = Array.isArray(message.content)
      ? (message.content as Array<{ type: string; text?: string }>)
      : [];
    for (const part of parts) {
      if (part.type === "text" && part.text?.startsWith(FOLDED_STEPS_MARKER)) return part.text;
    }
  }
  return "";
}

describe("folding a loop twice", () => {
  it("keeps the values the first fold carried", () => {
    let messages: ModelMessage[] = [{ role: "user", content: "Reconcile the receipts." }];
    for (let i = 0; i < 10; i++) messages.push(...stepMessages(i));
    const first = foldEarlierSteps(messages, opts(1200, 300));
    expect(first.folded).toBeGreaterThan(0);
    const note1 = noteOf(first.messages);
    expect(note1).toContain("R00000");
    // The loop goes on from the folded messages (AI SDK 7 carries prepareStep's messages forward).
    messages = [...first.messages];
    for (let i = 10; i < 30; i++) messages.push(...stepMessages(i));
    const second = foldEarlierSteps(messages, opts(1200, 300));
    const note2 = noteOf(second.messages);
    // The exact values of the earliest steps are still carried…
    expect(note2).toContain("R00000");
    // …as values, once, not as a step line…
    expect(note2.split("\n").filter((l) => l.startsWith("Values seen:"))).toHaveLength(1);
    // …and the steps the note stands for are counted right: its lines and its count of the rest.
    const lines = note2.split("\n");
    const listed = lines.filter((l) => l.startsWith("- lookup")).length;
    const untold = Number(/^- \((\d+) older steps\)$/m.exec(note2)?.[1] ?? 0);
    const left = second.messages.filter((m) => m.role === "tool").length;
    expect(listed + untold).toBe(30 - left);
  });
});
