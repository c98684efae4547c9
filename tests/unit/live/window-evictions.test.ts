import { describe, expect, it } from "vitest";
import { type LiveBus, memoryBus } from "@/lib/live/bus";
import {
  EVICTION_LISTEN_RETRY_MS,
  shareEvictions,
  watchWindowEvictions,
} from "@/lib/live/window-evictions";

/** Lets the memory bus deliver what was published (it delivers after the publisher moves on). */
const delivered = () => new Promise((resolve) => setTimeout(resolve, 0));

/** An instance on `bus` that records the windows the bus told it to forget. */
async function instanceOn(bus: LiveBus, now?: () => number) {
  const forgotten: string[] = [];
  const evictions = shareEvictions(
    bus,
    (provider, model) => forgotten.push(`${provider}/${model}`),
    now,
  );
  await evictions.listen();
  return { evictions, forgotten };
}

describe("window evictions on the live bus", () => {
  it("an eviction one instance announces is forgotten by every other, not again by itself", async () => {
    const bus = memoryBus();
    const [a, b, c] = [await instanceOn(bus), await instanceOn(bus), await instanceOn(bus)];
    a.evictions.announce("openai", "gpt-4o");
    await delivered();
    expect(a.forgotten).toEqual([]);
    expect(b.forgotten).toEqual(["openai/gpt-4o"]);
    expect(c.forgotten).toEqual(["openai/gpt-4o"]);
  });

  it("a message it cannot read evicts nothing", async () => {
    const bus = memoryBus();
    const heard: string[] = [];
    await watchWindowEvictions(bus, "self", (provider, model) =>
      heard.push(`${provider}/${model}`),
    );
    for (const message of [
      "not json",
      "{}",
      JSON.stringify({ from: "x", provider: 1, model: "m" }),
    ]) {
      await bus.publisher.publish("fold:window-evict", message);
    }
    await delivered();
    expect(heard).toEqual([]);
  });

  it("a bus that refused to listen is tried again only after the retry wait", async () => {
    const bus = memoryBus();
    let clock = 0;
    let refusals = 1;
    const subscribe = bus.subscriber.subscribe;
    bus.subscriber.subscribe = async (channel, callback) => {
      if (refusals-- > 0) throw new Error("the live bus's Redis is unavailable");
      return subscribe(channel, callback);
    };
    const b = await instanceOn(bus, () => clock);
    // b does not hear yet; within the wait it does not ask again.
    clock = EVICTION_LISTEN_RETRY_MS - 1;
    await b.evictions.listen();
    const announcer = shareEvictions(bus, () => undefined);
    announcer.announce("openai", "gpt-4o");
    await delivered();
    expect(b.forgotten).toEqual([]);

    clock = EVICTION_LISTEN_RETRY_MS;
    await b.evictions.listen();
    announcer.announce("openai", "gpt-4o");
    await delivered();
    expect(b.forgotten).toEqual(["openai/gpt-4o"]);
  });

  it("a subscription given up on that lands later is dropped, so the retry's is the only one", async () => {
    const bus = memoryBus();
    let clock = 0;
    let refusals = 1;
    const subscribe = bus.subscriber.subscribe;
    bus.subscriber.subscribe = async (channel, callback) => {
      // Redis answered too late: the subscription lands though the caller gave up on it.
      await subscribe(channel, callback);
      if (refusals-- > 0) throw new Error("the live bus's Redis did not answer in time");
    };
    const b = await instanceOn(bus, () => clock);
    clock = EVICTION_LISTEN_RETRY_MS;
    await b.evictions.listen();

    shareEvictions(bus, () => undefined).announce("openai", "gpt-4o");
    await delivered();
    expect(b.forgotten).toEqual(["openai/gpt-4o"]);
  });

  it("a subscription given up on hears nothing even when the bus cannot drop it", async () => {
    const bus = memoryBus();
    const landed: Array<(message: string) => void> = [];
    bus.subscriber.subscribe = async (_channel, callback) => {
      landed.push(callback);
      throw new Error("the live bus's Redis did not answer in time");
    };
    bus.subscriber.unsubscribe = async () => {
      throw new Error("the live bus's Redis did not answer in time");
    };
    const heard: string[] = [];
    await expect(
      watchWindowEvictions(bus, "self", (provider, model) => heard.push(`${provider}/${model}`)),
    ).rejects.toThrow();
    for (const listener of landed) {
      listener(JSON.stringify({ from: "other", provider: "openai", model: "gpt-4o" }));
    }
    expect(heard).toEqual([]);
  });
});
