import { setTimeout as sleep } from "node:timers/promises";
import { createClient } from "redis";
import type { Publisher, Subscriber } from "resumable-stream/generic";
import { env } from "@/lib/env";
import { log } from "@/lib/log";

/**
 * What server instances tell each other about a running turn: "stop it" and
 * the chunks of its stream for a reader that joined late (a reload, a second
 * tab, another instance). Redis when REDIS_URL is set, so it works across
 * instances; otherwise one process's memory, which is all a single instance
 * needs. The shape is `resumable-stream`'s publisher and subscriber, so the
 * same bus carries both.
 */
export type LiveBus = { publisher: Publisher; subscriber: Subscriber; kind: "redis" | "memory" };

type Holder = typeof globalThis & { __foldLiveBus?: Map<string, LiveBus> };

/** The process's bus (one per REDIS_URL; created on first use). */
export function liveBus(): LiveBus {
  const url = env().redisUrl;
  const holder = globalThis as Holder;
  holder.__foldLiveBus ??= new Map();
  const key = url ?? "memory";
  let bus = holder.__foldLiveBus.get(key);
  if (!bus) {
    bus = url ? redisBus(url) : memoryBus();
    holder.__foldLiveBus.set(key, bus);
  }
  return bus;
}

/** How long the first operation waits for Redis to answer before the bus says it is down. */
const CONNECT_WAIT_MS = 1_000;

/**
 * A bus on Redis: one connection publishes and stores, a second one subscribes (Redis's rule).
 * While Redis is down its operations fail at once instead of queueing until it is back (a turn
 * then goes on without Stop and resumption, and says so in the log); the clients reconnect by
 * themselves.
 */
export function redisBus(url: string): LiveBus {
  const publisher = createClient({ url, disableOfflineQueue: true });
  const subscriber = publisher.duplicate();
  for (const client of [publisher, subscriber]) {
    client.on("error", (error: unknown) => log.warn({ err: error }, "live bus: redis"));
  }
  const connectPublisher = whenReady(publisher);
  const connectSubscriber = whenReady(subscriber);
  return {
    kind: "redis",
    publisher: {
      connect: connectPublisher,
      publish: async (channel, message) => {
        await connectPublisher();
        return publisher.publish(channel, message);
      },
      set: async (key, value, options) => {
        await connectPublisher();
        return options?.EX
          ? publisher.set(key, value, { expiration: { type: "EX", value: options.EX } })
          : publisher.set(key, value);
      },
      get: async (key) => {
        await connectPublisher();
        return publisher.get(key);
      },
      incr: async (key) => {
        await connectPublisher();
        return publisher.incr(key);
      },
    },
    subscriber: {
      connect: connectSubscriber,
      subscribe: async (channel, callback) => {
        await connectSubscriber();
        await subscriber.subscribe(channel, (message) => callback(message));
      },
      unsubscribe: async (channel) => {
        await connectSubscriber();
        return subscriber.unsubscribe(channel);
      },
    },
  };
}

/**
 * Connects `client` once, lazily; afterwards resolves when it is ready and throws when it is
 * not: the first call waits up to CONNECT_WAIT_MS for the first connection, later ones do not
 * wait for a Redis that did not answer.
 */
function whenReady(client: ReturnType<typeof createClient>) {
  let connecting: Promise<unknown> | undefined;
  let waited = false;
  return async () => {
    if (client.isReady) return;
    connecting ??= client.connect().catch(() => undefined);
    if (!waited) {
      waited = true;
      await Promise.race([connecting, sleep(CONNECT_WAIT_MS)]);
    }
    if (!client.isReady) throw new Error("the live bus's Redis is unavailable");
  };
}

/** The memory bus drops expired keys once it holds this many. */
const SWEEP_AT = 1_000;

/** A bus in this process's memory: keys with expiry, channels with listeners. */
export function memoryBus(now: () => number = Date.now): LiveBus {
  const values = new Map<string, { value: string; expiresAt: number }>();
  const channels = new Map<string, Set<(message: string) => void>>();
  const read = (key: string) => {
    const entry = values.get(key);
    if (entry && entry.expiresAt <= now()) values.delete(key);
    return values.get(key)?.value ?? null;
  };
  return {
    kind: "memory",
    publisher: {
      connect: async () => undefined,
      publish: async (channel, message) => {
        const listeners = [...(channels.get(channel) ?? [])];
        // Delivered after the publisher moves on, as over a network.
        for (const listener of listeners) queueMicrotask(() => listener(message));
        return listeners.length;
      },
      set: async (key, value, options) => {
        const expiresAt = options?.EX ? now() + options.EX * 1000 : Number.POSITIVE_INFINITY;
        values.set(key, { value, expiresAt });
        if (values.size > SWEEP_AT) for (const known of [...values.keys()]) read(known);
        return "OK";
      },
      get: async (key) => read(key),
      incr: async (key) => {
        const current = Number(read(key) ?? 0);
        // Redis's own wording: resumable-stream recognises a finished stream by it.
        if (!Number.isInteger(current))
          throw new Error("ERR value is not an integer or out of range");
        const next = current + 1;
        const expiresAt = values.get(key)?.expiresAt ?? Number.POSITIVE_INFINITY;
        values.set(key, { value: String(next), expiresAt });
        return next;
      },
    },
    subscriber: {
      connect: async () => undefined,
      subscribe: async (channel, callback) => {
        let listeners = channels.get(channel);
        if (!listeners) {
          listeners = new Set();
          channels.set(channel, listeners);
        }
        listeners.add(callback);
      },
      unsubscribe: async (channel) => channels.delete(channel),
    },
  };
}
