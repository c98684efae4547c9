import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runTier1 } from "@/lib/compaction/tier1";
import { type CompactionState, SUMMARY_MESSAGE_ID } from "@/lib/compaction/view";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import {
  assistantMessage,
  EMPTY_STATE,
  filler,
  ids,
  keptMessages,
  summaryText,
  type ToolSpec,
  tier1Harness,
  userMessage,
} from "./histories";

type MessageSpec =
  | { role: "user"; tokens: number }
  | { role: "assistant"; tokens: number; tools: { name: string; tokens: number; json: boolean }[] };

const toolArb = fc.record({
  name: fc.constantFrom("fetch_url", "run_query", "read_file"),
  tokens: fc.integer({ min: 0, max: 2500 }),
  json: fc.boolean(),
});

const messageArb: fc.Arbitrary<MessageSpec> = fc.oneof(
  fc.record({ role: fc.constant("user" as const), tokens: fc.integer({ min: 1, max: 600 }) }),
  fc.record({
    role: fc.constant("assistant" as const),
    tokens: fc.integer({ min: 0, max: 600 }),
    tools: fc.array(toolArb, { maxLength: 3 }),
  }),
);

/** A stored history that starts and ends with a user message (Tier 1 runs before the reply). */
function buildHistory(specs: MessageSpec[]): FoldUIMessage[] {
  const all: MessageSpec[] = [{ role: "user", tokens: 20 }, ...specs, { role: "user", tokens: 20 }];
  return all.map((spec, i) => {
    if (spec.role === "user")
      return userMessage(`m${i}`, `request ${i}: ${filler(spec.tokens, i)}`);
    const tools = spec.tools.map(
      (tool, k): ToolSpec => ({
        name: tool.name,
        callId: `m${i}-call${k}`,
        input: { target: `https://example.com/${i}/${k}` },
        output: tool.json
          ? { rows: filler(tool.tokens, i + k), count: tool.tokens }
          : `result ${i}.${k}: ${filler(tool.tokens, i + k)}`,
      }),
    );
    return assistantMessage(`m${i}`, {
      tools,
      text: spec.tokens > 0 ? filler(spec.tokens, i) : undefined,
    });
  });
}

const scenarioArb = fc.record({
  specs: fc.array(messageArb, { minLength: 0, maxLength: 22 }),
  /** Where a previous compaction left the watermark, as a fraction of the history (null: none). */
  watermarkAt: fc.option(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true })),
});

function toolParts(message: FoldUIMessage) {
  return message.parts.flatMap((p) => ("toolCallId" in p ? [p] : []));
}

describe("Tier 1 properties (forced compaction over random histories)", () => {
  it("folds a span at a message boundary and never splits a tool call from its result", async () => {
    let compacted = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ specs, watermarkAt }) => {
        const history = buildHistory(specs);
        const h = tier1Harness();
        // A watermark never covers the pending user message.
        const w = watermarkAt === null ? -1 : Math.floor(watermarkAt * (history.length - 1));
        const state: CompactionState =
          w < 0
            ? EMPTY_STATE
            : {
                summary: summaryText("prior"),
                watermark: history[w]?.id ?? null,
                dirty: false,
                version: 1,
              };
        const after = history.slice(w + 1);

        const result = await runTier1(h.input(history, state, { force: true }));

        const kept = keptMessages(result.view.messages);
        // Every tool part the model sees is a complete call with its result, as stored.
        const stored = new Map(history.flatMap(toolParts).map((p) => [p.toolCallId, p]));
        for (const message of kept) {
          const original = history.find((m) => m.id === message.id) as FoldUIMessage;
          expect(toolParts(message).map((p) => p.toolCallId)).toEqual(
            toolParts(original).map((p) => p.toolCallId),
          );
          for (const part of toolParts(message)) {
            expect(part.state).toBe("output-available");
            expect(part.state === "output-available" && part.output !== undefined).toBe(true);
            const source = stored.get(part.toolCallId);
            expect(part.type).toBe(source?.type);
            expect(part.input).toEqual(source?.input);
          }
        }
        // The view is an optional summary followed by a suffix of the stored history.
        expect(ids(kept)).toEqual(ids(history.slice(history.length - kept.length)));

        if (result.kind === "skipped") {
          // Nothing to fold, or (Compact now) a fold that would not have made the view smaller:
          // then it summarized, and kept nothing of it.
          if (h.summarizer.calls.length > 0) {
            expect(h.summarizer.calls).toHaveLength(1);
            expect(result.draft.note).toMatch(/would not make the context smaller/);
          }
          expect(ids(kept)).toEqual(ids(after));
          return;
        }
        expect(result.kind).toBe("compacted");
        if (result.kind !== "compacted") return;
        compacted++;
        expect(h.summarizer.calls).toHaveLength(1);
        const span = h.summarizer.calls[0]?.span ?? [];
        // Span + kept partition the messages after the old watermark at a message boundary.
        expect(span.length).toBeGreaterThan(0);
        expect([...ids(span), ...ids(kept)]).toEqual(ids(after));
        expect(span).toEqual(after.slice(0, span.length)); // whole stored messages, unpruned
        expect(kept[0]?.role).toBe("user");
        expect(result.view.messages[0]?.id).toBe(SUMMARY_MESSAGE_ID);
        expect(result.next.watermark).toBe(span.at(-1)?.id);
        expect(result.draft.watermarkFrom).toBe(state.watermark);
        expect(h.summarizer.calls[0]?.previousSummary).toBe(state.summary);
      }),
      { numRuns: 150 },
    );
    expect(compacted).toBeGreaterThan(75); // most random histories have something to fold
  });
});
