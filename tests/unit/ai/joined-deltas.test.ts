import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { streamText } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { joinedDeltas, withJoinedDeltas } from "@/lib/ai/joined-deltas";

type Part = LanguageModelV4StreamPart;

const text = (delta: string, id = "t"): Part => ({ type: "text-delta", id, delta });
const nextTurnOfLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const finish: Part = { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage };

/** A provider's stream that the test writes to as it goes. */
function provider() {
  let controller!: ReadableStreamDefaultController<Part>;
  let cancelled: unknown = null;
  const stream = new ReadableStream<Part>({
    start: (c) => {
      controller = c;
    },
    cancel: (reason) => {
      cancelled = reason ?? "cancelled";
    },
  });
  return { stream, controller, cancelled: () => cancelled };
}

async function drain(stream: ReadableStream<Part>): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

const textOf = (parts: readonly Part[]) =>
  parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("");

describe("joinedDeltas", () => {
  it("passes the first delta of a burst on at once and the rest of the burst as one delta", async () => {
    const source = provider();
    const reader = joinedDeltas(source.stream).getReader();
    source.controller.enqueue({ type: "text-start", id: "t" });
    expect((await reader.read()).value).toEqual({ type: "text-start", id: "t" });
    // The turn waits for the next part when the provider sends a burst.
    const next = reader.read();
    for (const delta of ["Hel", "lo", ", ", "world"]) source.controller.enqueue(text(delta));
    // The first token is not held for the ones behind it.
    expect((await next).value).toEqual(text("Hel"));
    expect((await reader.read()).value).toEqual(text("lo, world"));
    source.controller.enqueue({ type: "text-end", id: "t" });
    source.controller.close();
    expect((await reader.read()).value).toEqual({ type: "text-end", id: "t" });
    expect((await reader.read()).done).toBe(true);
  });

  it("passes deltas one by one when each comes in a turn of the event loop of its own", async () => {
    const source = provider();
    const reader = joinedDeltas(source.stream).getReader();
    const read: Part[] = [];
    for (const delta of ["Once", " upon", " a", " time"]) {
      source.controller.enqueue(text(delta));
      read.push((await reader.read()).value as Part);
      await nextTurnOfLoop();
    }
    expect(read).toEqual([text("Once"), text(" upon"), text(" a"), text(" time")]);
  });

  it("joins only deltas of one part without metadata, and keeps every other part in its place", async () => {
    const source = provider();
    const parts: Part[] = [
      text("a"),
      text("b"),
      { type: "reasoning-delta", id: "r", delta: "think" },
      { type: "reasoning-delta", id: "r", delta: "ing" },
      text("c", "t2"),
      text("d", "t2"),
      { type: "text-delta", id: "t2", delta: "e", providerMetadata: { fake: { n: 1 } } },
      text("f", "t2"),
      { type: "tool-input-delta", id: "call", delta: '{"q":' },
      { type: "tool-input-delta", id: "call", delta: '"x"}' },
      finish,
    ];
    for (const part of parts) source.controller.enqueue(part);
    source.controller.close();
    expect(await drain(joinedDeltas(source.stream))).toEqual([
      text("a"),
      text("b"),
      { type: "reasoning-delta", id: "r", delta: "thinking" },
      text("cd", "t2"),
      { type: "text-delta", id: "t2", delta: "e", providerMetadata: { fake: { n: 1 } } },
      text("f", "t2"),
      { type: "tool-input-delta", id: "call", delta: '{"q":"x"}' },
      finish,
    ]);
  });

  it("ends at once with the provider's error, dropping what waits unread, as a Stop needs", async () => {
    const source = provider();
    const reader = joinedDeltas(source.stream).getReader();
    source.controller.enqueue(text("Once"));
    expect((await reader.read()).value).toEqual(text("Once"));
    // Read from the provider, waiting for the burst to end, when the request is aborted.
    source.controller.enqueue(text(" upon"));
    source.controller.enqueue(text(" a time"));
    source.controller.error(new Error("aborted"));
    await expect(reader.read()).rejects.toThrow("aborted");
  });

  it("cancelling it cancels the provider's stream", async () => {
    const source = provider();
    const reader = joinedDeltas(source.stream).getReader();
    source.controller.enqueue(text("a"));
    await reader.read();
    await reader.cancel("stopped");
    expect(source.cancelled()).toBe("stopped");
  });

  it("gives the AI SDK the same reply in far fewer parts when the provider sends a burst", async () => {
    const words = Array.from({ length: 500 }, (_, i) => `word${i} `);
    const chunks: Part[] = [
      { type: "text-start", id: "t" },
      ...words.map((word) => text(word)),
      { type: "text-end", id: "t" },
      finish,
    ];
    const burst = () =>
      new MockLanguageModelV4({
        doStream: async () => ({
          stream: new ReadableStream<Part>({
            start(controller) {
              for (const chunk of chunks) controller.enqueue(chunk);
              controller.close();
            },
          }),
        }),
      });
    const deltasOf = async (model: MockLanguageModelV4 | ReturnType<typeof withJoinedDeltas>) => {
      const deltas: string[] = [];
      for await (const part of streamText({ model, prompt: "hi" }).stream) {
        if (part.type === "text-delta") deltas.push(part.text);
      }
      return deltas;
    };
    const plain = await deltasOf(burst());
    const joined = await deltasOf(withJoinedDeltas(burst()));
    expect(plain).toHaveLength(500);
    expect(joined.join("")).toBe(words.join(""));
    expect(joined.length).toBeLessThanOrEqual(2);
    expect(textOf(chunks)).toBe(joined.join(""));
  });
});
