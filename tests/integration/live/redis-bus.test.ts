import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { redisBus } from "@/lib/live/bus";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

it("lets every operation that comes while the first connection is made wait for it", async () => {
  // A fresh bus connects lazily: a turn's first steps (its stop watch, its pending-stop read,
  // its live stream) all reach it at once, and none may be told Redis is unavailable.
  const bus = redisBus(REDIS_URL);
  const key = `fold:test:${randomUUID()}`;
  const channel = `fold:test:${randomUUID()}`;
  const heard: string[] = [];
  const listener = (message: string) => heard.push(message);
  const results = await Promise.allSettled([
    bus.publisher.set(key, "first", { EX: 30 }),
    bus.publisher.get(key),
    bus.publisher.publish(channel, "nobody yet"),
    bus.subscriber.subscribe(channel, listener),
    bus.subscriber.connect(),
  ]);
  expect(results.filter((r) => r.status === "rejected")).toEqual([]);
  await bus.publisher.publish(channel, "hello");
  // The first publish races the subscribe on the other connection: it may be heard or not.
  await expect.poll(() => heard.at(-1)).toBe("hello");
  expect(heard.filter((message) => message !== "nobody yet")).toEqual(["hello"]);
  await bus.subscriber.unsubscribe(channel, listener);
});
