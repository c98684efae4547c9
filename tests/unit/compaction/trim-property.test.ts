import type { ModelMessage, ToolResultPart } from "ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CUT_ARGUMENTS_KEY, trimToFit } from "@/lib/compaction/trim";
import { createEstimator } from "@/lib/context/tokens";

/**
 * trimToFit (DESIGN §9, §10) over random tool loops: it only shrinks content,
 * so no message or part disappears, every call keeps its result, the latest
 * user message is untouched, and "fits" is never a lie.
 */

const estimator = createEstimator();
const estimate = (messages: ModelMessage[]) => estimator.estimateModelMessages(messages);

const WORDS = ["lorem", "ipsum", "dolor", "sit", "amet", "vector", "window", "result", "page"];

function filler(chars: number, seed: number): string {
  const words: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    const word = `${WORDS[(i * 7 + seed) % WORDS.length]}${(i + seed) % 11}`;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(" ").slice(0, chars);
}

type CallSpec = { size: number; args: number; json: boolean; name: "fetch_url" | "current_time" };
type StepSpec = { text: number | null; calls: CallSpec[]; reversedResults: boolean };
type LoopSpec = {
  earlier: Array<{ user: number; assistant: number }>;
  request: number;
  requestAsParts: boolean;
  steps: StepSpec[];
};

const callArb: fc.Arbitrary<CallSpec> = fc.record({
  size: fc.oneof(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 600, max: 16_000 })),
  args: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8_000 })),
  json: fc.boolean(),
  name: fc.constantFrom("fetch_url" as const, "current_time" as const),
});

const stepArb: fc.Arbitrary<StepSpec> = fc.record({
  text: fc.option(fc.integer({ min: 1, max: 3_000 }), { nil: null }),
  calls: fc.array(callArb, { minLength: 1, maxLength: 3 }),
  reversedResults: fc.boolean(),
});

const loopArb: fc.Arbitrary<LoopSpec> = fc.record({
  earlier: fc.array(
    fc.record({
      user: fc.integer({ min: 1, max: 3_000 }),
      assistant: fc.integer({ min: 1, max: 3_000 }),
    }),
    { maxLength: 2 },
  ),
  request: fc.integer({ min: 1, max: 12_000 }),
  requestAsParts: fc.boolean(),
  steps: fc.array(stepArb, { minLength: 0, maxLength: 6 }),
});

function buildLoop(spec: LoopSpec): ModelMessage[] {
  const messages: ModelMessage[] = [{ role: "system", content: "You are Fold." }];
  spec.earlier.forEach((turn, i) => {
    messages.push({ role: "user", content: `Earlier ${i}: ${filler(turn.user, i)}` });
    messages.push({ role: "assistant", content: filler(turn.assistant, i + 100) });
  });
  const request = `Latest request: ${filler(spec.request, 7)}`;
  messages.push(
    spec.requestAsParts
      ? { role: "user", content: [{ type: "text", text: request }] }
      : { role: "user", content: request },
  );
  spec.steps.forEach((step, s) => {
    const calls = step.calls.map((call, c) => ({ ...call, id: `call_${s}_${c}` }));
    messages.push({
      role: "assistant",
      content: [
        ...(step.text === null ? [] : [{ type: "text" as const, text: filler(step.text, s) }]),
        ...calls.map((call) => ({
          type: "tool-call" as const,
          toolCallId: call.id,
          toolName: call.name,
          input: call.args
            ? { url: `https://example.com/${call.id}`, body: filler(call.args, s + 50) }
            : { url: `https://example.com/${call.id}` },
        })),
      ],
    });
    const results = calls.map(
      (call, c): ToolResultPart => ({
        type: "tool-result",
        toolCallId: call.id,
        toolName: call.name,
        output: call.json
          ? { type: "json", value: { status: 200, text: filler(call.size, s * 10 + c) } }
          : { type: "text", value: filler(call.size, s * 10 + c) },
      }),
    );
    messages.push({ role: "tool", content: step.reversedResults ? results.reverse() : results });
  });
  return messages;
}

type PartSummary = { type: string; toolCallId?: string; toolName?: string };

function partsOf(message: ModelMessage): PartSummary[] {
  if (typeof message.content === "string") return [{ type: "string" }];
  return message.content.map((part) => ({
    type: part.type,
    ...("toolCallId" in part ? { toolCallId: part.toolCallId } : {}),
    ...("toolName" in part ? { toolName: part.toolName } : {}),
  }));
}

function toolCallsOf(message: ModelMessage) {
  return typeof message.content === "string"
    ? []
    : message.content.filter((part) => part.type === "tool-call");
}

const scenarioArb = loopArb.chain((spec) => {
  const messages = buildLoop(spec);
  const before = estimate(messages);
  return fc.record({
    messages: fc.constant(messages),
    limitTokens: fc.integer({ min: 0, max: Math.ceil(before * 1.2) }),
    keepRecentToolResults: fc.integer({ min: 0, max: 6 }),
    force: fc.boolean(),
  });
});

describe("trimToFit over random tool loops", () => {
  it("keeps every message, part and call/result pair, the latest request, and its word on fit", () => {
    fc.assert(
      fc.property(scenarioArb, ({ messages, limitTokens, keepRecentToolResults, force }) => {
        const original = structuredClone(messages);
        const result = trimToFit(messages, { limitTokens, keepRecentToolResults, estimate, force });
        const out = result.messages;

        // The input is never mutated.
        expect(messages).toEqual(original);

        // No message or part removed; roles, part kinds, ids and names stay in place.
        expect(out).toHaveLength(messages.length);
        out.forEach((message, i) => {
          const source = messages[i] as ModelMessage;
          expect(message.role).toBe(source.role);
          expect(partsOf(message)).toEqual(partsOf(source));
          // A tool call keeps its id and name; its arguments are whole or cut to head and tail
          // (DESIGN §16: old arguments are capped like old results), never longer.
          const calls = toolCallsOf(message);
          toolCallsOf(source).forEach((call, k) => {
            const kept = calls[k];
            expect(kept?.toolCallId).toBe(call.toolCallId);
            expect(kept?.toolName).toBe(call.toolName);
            if (JSON.stringify(kept?.input) !== JSON.stringify(call.input)) {
              const cut = ((kept?.input ?? {}) as Record<string, unknown>)[CUT_ARGUMENTS_KEY];
              expect(typeof cut).toBe("string");
              expect(String(cut).length).toBeLessThan(JSON.stringify(call.input).length);
            }
          });
        });

        // Every tool call has exactly one result with its id, in a later message.
        out.forEach((message, at) => {
          for (const call of toolCallsOf(message)) {
            const found = out.flatMap((m, index) =>
              typeof m.content === "string"
                ? []
                : m.content
                    .filter((p) => p.type === "tool-result" && p.toolCallId === call.toolCallId)
                    .map(() => index),
            );
            expect(found).toHaveLength(1);
            expect(found[0]).toBeGreaterThan(at);
          }
        });

        // The latest user message goes out exactly as written.
        const lastUser = messages.findLastIndex((m) => m.role === "user");
        expect(out[lastUser]).toEqual(messages[lastUser]);
        // So does the system prompt.
        expect(out[0]).toEqual(messages[0]);

        // The reported sizes are the real ones, and "fits" means it fits.
        expect(result.before).toBe(estimate(messages));
        expect(result.after).toBe(estimate(out));
        if (result.fits) expect(result.after).toBeLessThanOrEqual(limitTokens);
        expect(result.after).toBeLessThanOrEqual(result.before);

        // Without force, something that already fits is left alone.
        if (!force && result.before <= limitTokens) expect(out).toEqual(messages);
      }),
      { numRuns: 150 },
    );
  });
});
