import { describe, expect, it } from "vitest";
import { env } from "@/lib/env";
import { memoryBus } from "@/lib/live/bus";
import { requestStop, watchStop } from "@/lib/live/stop";
import { endTurnStream, publishTurnStream, resumeTurnStream } from "@/lib/live/streams";

/** A stream of strings whose pieces are released one by one by `push`, then `end`. */
function controlledStream() {
  let controller!: ReadableStreamDefaultController<string>;
  const stream = new ReadableStream<string>({
    start: (c) => {
      controller = c;
    },
  });
  return {
    stream,
    push: (piece: string) => controller.enqueue(piece),
    end: () => controller.close(),
  };
}

async function readAll(stream: ReadableStream<string>): Promise<string> {
  let text = "";
  for await (const piece of stream) text += piece;
  return text;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 10));
/** The turn a reader follows holds its chat. */
const running = async () => true;

describe("the single-instance live bus (no REDIS_URL)", () => {
  it("gives a reader who joins mid-stream everything so far, then the rest", async () => {
    const bus = memoryBus();
    const source = controlledStream();
    const published = publishTurnStream(bus, "chat-1", "stream-1", source.stream);
    source.push("data: one\n\n");
    source.push("data: two\n\n");
    await tick();
    const resumed = await resumeTurnStream(bus, "chat-1", "turn", running);
    expect(resumed).not.toBeNull();
    const reading = readAll(resumed as ReadableStream<string>);
    source.push("data: three\n\n");
    await tick();
    source.end();
    await published;
    expect(await reading).toBe("data: one\n\ndata: two\n\ndata: three\n\n");
  });

  it("a publish that fails while a reader follows costs that reader only: the stream still runs to its end", async () => {
    const bus = memoryBus();
    const source = controlledStream();
    const published = publishTurnStream(bus, "chat-3", "stream-3", source.stream);
    source.push("data: one\n\n");
    await tick();
    const resumed = await resumeTurnStream(bus, "chat-3", "turn", running);
    expect(resumed).not.toBeNull();
    await tick();
    // The bus goes down for chunk deliveries (a Redis failover, say).
    const publish = bus.publisher.publish;
    bus.publisher.publish = (channel, message) =>
      channel.includes(":chunk:")
        ? Promise.reject(new Error("bus down"))
        : publish(channel, message);
    source.push("data: two\n\n");
    source.end();
    const ended = await Promise.race([
      published.then(() => "ended"),
      new Promise((resolve) => setTimeout(() => resolve("still running"), 1_000)),
    ]);
    expect(ended).toBe("ended");
    await (resumed as ReadableStream<string>).cancel().catch(() => undefined);
  });

  it("has nothing to resume for a chat without a live stream, or once the turn is over", async () => {
    const bus = memoryBus();
    expect(await resumeTurnStream(bus, "chat-2", "turn", running)).toBeNull();
    const source = controlledStream();
    const published = publishTurnStream(bus, "chat-2", "stream-2", source.stream);
    source.push("data: only\n\n");
    source.end();
    await published;
    await endTurnStream(bus, "chat-2");
    expect(await resumeTurnStream(bus, "chat-2", "turn", running)).toBeNull();
  });

  it("a turn whose work before its model call took minutes can still be followed", async () => {
    let now = 0;
    const bus = memoryBus(() => now);
    const source = controlledStream();
    void publishTurnStream(bus, "chat-6", "stream-6", source.stream);
    source.push("data: one\n\n");
    await tick();
    // Ten minutes of summarizer passes, then the longest model call the server allows.
    now = env().turnMaxDurationMs + 10 * 60_000;
    const resumed = await resumeTurnStream(bus, "chat-6", "turn", running);
    expect(resumed).not.toBeNull();
    await resumed?.cancel();
    source.end();
  });

  it("a reader whose turn ended without its end reaching the stream (its instance died) is ended once the chat is free", async () => {
    const bus = memoryBus();
    const source = controlledStream();
    void publishTurnStream(bus, "chat-4", "stream-4", source.stream);
    source.push("data: one\n\n");
    await tick();
    // The producer sends nothing more, ever; the chat's lease ran out.
    let held = true;
    const resumed = await resumeTurnStream(bus, "chat-4", "turn", async () => held);
    expect(resumed).not.toBeNull();
    const reading = readAll(resumed as ReadableStream<string>);
    held = false;
    const ended = await Promise.race([
      reading,
      new Promise((resolve) => setTimeout(() => resolve("still open"), 10_000)),
    ]);
    expect(ended).toBe("data: one\n\n");
  }, 15_000);

  it("a resume whose producer never answers, on a bus that hangs as it unsubscribes, gives up: nothing to resume", async () => {
    const bus = memoryBus();
    // A stream marked live whose producer is gone, and a bus that stalls as the reader gives up
    // (resumable-stream then waits for its unsubscribe before it answers).
    await bus.publisher.set("fold:live-stream:chat-5", "stream-5", { EX: 60 });
    await bus.publisher.set("fold:stream:rs:sentinel:stream-5", "1", { EX: 60 });
    bus.subscriber.unsubscribe = () => new Promise(() => undefined);
    const resumed = await Promise.race([
      resumeTurnStream(bus, "chat-5", "turn", running),
      new Promise((resolve) => setTimeout(() => resolve("never answered"), 10_000)),
    ]);
    expect(resumed).toBeNull();
  }, 15_000);

  it("delivers a stop to the chat's running turn only, and not after it stopped listening", async () => {
    const bus = memoryBus();
    const heard: string[] = [];
    const unwatchA = await watchStop(bus, "chat-a", { messageId: "u-a" }, () => heard.push("a"));
    await watchStop(bus, "chat-b", { messageId: "u-b" }, () => heard.push("b"));
    expect(await requestStop(bus, "chat-a")).toBe(1);
    await tick();
    expect(heard).toEqual(["a"]);
    await unwatchA();
    expect(await requestStop(bus, "chat-a")).toBe(0);
    await tick();
    expect(heard).toEqual(["a"]);
  });

  it("a turn that stops listening leaves another turn of the same chat listening (one that took the chat when its lease was lost)", async () => {
    const bus = memoryBus();
    const heard: string[] = [];
    const unwatchOld = await watchStop(bus, "chat-1", { messageId: "u-1" }, () =>
      heard.push("old"),
    );
    const unwatchNew = await watchStop(bus, "chat-1", { messageId: "u-2" }, () =>
      heard.push("new"),
    );
    await unwatchOld();
    expect(await requestStop(bus, "chat-1")).toBe(1);
    await tick();
    expect(heard).toEqual(["new"]);
    await unwatchNew();
    expect(await requestStop(bus, "chat-1")).toBe(0);
  });

  it("drops every listener of a channel when unsubscribing names none (resumable-stream's own channels)", async () => {
    const bus = memoryBus();
    await bus.subscriber.subscribe("channel", () => undefined);
    await bus.subscriber.subscribe("channel", () => undefined);
    await bus.subscriber.unsubscribe("channel");
    expect(await bus.publisher.publish("channel", "hello")).toBe(0);
  });

  it("holding many live keys, a write does not walk them all (each stream keeps one a day)", async () => {
    let reads = 0;
    const bus = memoryBus(() => {
      reads += 1;
      return 0;
    });
    const writes = 5_000;
    for (let i = 0; i < writes; i++) await bus.publisher.set(`k${i}`, "v", { EX: 86_400 });
    // A sweep now and then (amortized: a few reads per write), not one per write over every key.
    expect(reads).toBeLessThan(10 * writes);
    expect(await bus.publisher.get("k0")).toBe("v");
  });

  it("expires keys like Redis does", async () => {
    let now = 0;
    const bus = memoryBus(() => now);
    await bus.publisher.set("k", "v", { EX: 2 });
    now = 1_999;
    expect(await bus.publisher.get("k")).toBe("v");
    now = 2_000;
    expect(await bus.publisher.get("k")).toBeNull();
  });
});

describe("a bus that fails as a published stream ends", () => {
  it("costs the stream's end record only: no rejection left unhandled, the turn's side still ends", async () => {
    const base = memoryBus();
    let down = false;
    const failing = <T>(call: () => Promise<T>) =>
      down ? Promise.reject(new Error("bus down")) : call();
    const bus = {
      ...base,
      publisher: {
        ...base.publisher,
        set: (key: string, value: string, options?: { EX?: number }) =>
          failing(() => base.publisher.set(key, value, options)),
      },
      subscriber: {
        ...base.subscriber,
        unsubscribe: (channel: string) => failing(() => base.subscriber.unsubscribe(channel)),
      },
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const source = controlledStream();
      const published = publishTurnStream(bus, "chat-9", "stream-9", source.stream);
      source.push("data: one\n\n");
      await tick();
      down = true;
      source.end();
      await published;
      // A rejection nobody handles is reported once the microtasks after it have run.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
