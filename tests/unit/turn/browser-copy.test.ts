import type { UIMessageChunk } from "ai";
import { describe, expect, it } from "vitest";
import { browserCopy } from "@/lib/turn/browser-copy";

const text = (delta: string, id = "t1"): UIMessageChunk => ({ type: "text-delta", id, delta });
const nextTurnOfLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

async function drain(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const NOTHING_YET = Symbol("nothing sent yet");

/**
 * What the browser has been sent so far, without letting the event loop move on: a read that
 * would have to wait (a chunk still held) ends the list.
 */
async function sentSoFar(stream: ReadableStream<UIMessageChunk>) {
  const reader = stream.getReader();
  const chunks: UIMessageChunk[] = [];
  for (;;) {
    // A chunk already queued settles the read before the marker; one still held does not.
    const read = await Promise.race([reader.read(), Promise.resolve(NOTHING_YET)]);
    if (read === NOTHING_YET || read.done) break;
    chunks.push(read.value);
  }
  reader.releaseLock();
  return chunks;
}

describe("the browser's copy of a turn", () => {
  it("sends the first delta of a burst at once and the rest of the burst joined, once the loop moves on", async () => {
    const copy = browserCopy();
    copy.write({ type: "text-start", id: "t1" });
    for (const delta of ["Hel", "lo", ", ", "world"]) copy.write(text(delta));
    // The first token is not held.
    expect(await sentSoFar(copy.stream)).toEqual([{ type: "text-start", id: "t1" }, text("Hel")]);
    await nextTurnOfLoop();
    copy.write({ type: "text-end", id: "t1" });
    copy.end();
    expect(await drain(copy.stream)).toEqual([text("lo, world"), { type: "text-end", id: "t1" }]);
  });

  it("sends joined text before any other chunk that follows it", async () => {
    const copy = browserCopy();
    copy.write(text("a"));
    copy.write(text("b"));
    copy.write(text("c"));
    copy.write({ type: "text-end", id: "t1" });
    copy.write({ type: "data-fold-retry", data: { reason: "length" } } as UIMessageChunk);
    // Read before the loop moves on: nothing waits on it once another kind of chunk came.
    expect(await sentSoFar(copy.stream)).toEqual([
      text("a"),
      text("bc"),
      { type: "text-end", id: "t1" },
      { type: "data-fold-retry", data: { reason: "length" } },
    ]);
  });

  it("passes deltas that come in different turns of the event loop one by one", async () => {
    const copy = browserCopy();
    for (const delta of ["one ", "two ", "three"]) {
      copy.write(text(delta));
      await nextTurnOfLoop();
    }
    copy.end();
    expect(await drain(copy.stream)).toEqual([text("one "), text("two "), text("three")]);
  });

  it("does not join deltas of different parts, of reasoning and text, or carrying provider metadata", async () => {
    const copy = browserCopy();
    const withMetadata: UIMessageChunk = {
      type: "text-delta",
      id: "t2",
      delta: "y",
      providerMetadata: { fake: { signature: "s" } },
    };
    copy.write(text("first", "t0"));
    copy.write(text("second", "t1"));
    copy.write(text("a", "t1"));
    copy.write(text("other", "t9"));
    copy.write({ type: "reasoning-delta", id: "t1", delta: "r" });
    copy.write(text("x", "t2"));
    copy.write(withMetadata);
    copy.write(text("z", "t2"));
    copy.end();
    expect(await drain(copy.stream)).toEqual([
      text("first", "t0"),
      text("seconda", "t1"),
      text("other", "t9"),
      { type: "reasoning-delta", id: "t1", delta: "r" },
      text("x", "t2"),
      withMetadata,
      text("z", "t2"),
    ]);
  });

  it("holds the finish back until the end, after the text joined before it", async () => {
    const copy = browserCopy();
    copy.write(text("a"));
    copy.write(text("b"));
    copy.write({ type: "finish" });
    copy.write(text("late"));
    expect(await sentSoFar(copy.stream)).toEqual([text("a")]);
    await nextTurnOfLoop();
    copy.end();
    expect(await drain(copy.stream)).toEqual([text("b"), { type: "finish" }, text("late")]);
  });

  it("ends with an error in place of the finish when the reply was not stored", async () => {
    const copy = browserCopy();
    copy.write(text("a"));
    copy.write(text("b"));
    copy.write({ type: "finish" });
    copy.end("This reply could not be saved.");
    expect(await drain(copy.stream)).toEqual([
      text("a"),
      text("b"),
      { type: "error", errorText: "This reply could not be saved." },
    ]);
  });

  it("drops joined text when the turn's stream fails or the browser went away", async () => {
    const failed = browserCopy();
    failed.write(text("a"));
    failed.write(text("b"));
    failed.fail(new Error("the chat could not be freed"));
    await nextTurnOfLoop();
    const reader = failed.stream.getReader();
    await expect(reader.read()).rejects.toThrow("the chat could not be freed");

    const gone = browserCopy();
    gone.write(text("a"));
    gone.write(text("b"));
    await gone.stream.cancel();
    // The flush after the burst finds no browser to write to, and does not throw.
    await nextTurnOfLoop();
    gone.write(text("c"));
    gone.end();
  });
});
