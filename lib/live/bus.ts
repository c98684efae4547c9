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
export type LiveBus = {
  publisher: Publisher;
  subscriber: LiveSubscriber;
  kind: "redis" | "memory";
};

type Listener = (message: string) => void;

/**
 * `resumable-stream`'s subscriber, whose `unsubscribe` may also name the callback to drop: then
 * only that listener goes, and the channel's subscription with its last listener in this
 * process (another turn of the same chat, one that took it when this turn's lease was lost,
 * keeps hearing its stops). Without a callback every listener of the channel goes: what
 * resumable-stream asks for its own channels, which have one listener each.
 */
export type LiveSubscriber = Omit<Subscriber, "unsubscribe"> & {
  unsubscribe: (channel: string, callback?: Listener) => Promise<unknown>;
};

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
 * How long any operation waits for Redis's answer (it takes a millisecond when Redis is well):
 * a Redis that stops answering without closing anything (a paused process, a network that
 * drops packets) would otherwise hold every turn that uses the bus, and the chat's lease.
 */
const ANSWER_WAIT_MS = 2_000;

/**
 * A bus on Redis: one connection publishes and stores, a second one subscribes (Redis's rule).
 * While Redis is down or not answering its operations fail instead of waiting until it is back
 * (a turn then goes on without Stop and resumption, and says so in the log); the clients
 * reconnect by themselves.
 */
export function redisBus(url: string): LiveBus {
  const publisher = createClient({ url, disableOfflineQueue: true });
  const subscriber = publisher.duplicate();
  for (const client of [publisher, subscriber]) {
    client.on("error", (error: unknown) => log.warn({ err: error }, "live bus: redis"));
  }
  const published = answering(publisher);
  const subscribed = answering(subscriber);
  return {
    kind: "redis",
    publisher: {
      connect: () => published(async () => undefined),
      publish: (channel, message) => published(() => publisher.publish(channel, message)),
      set: (key, value, options) =>
        published(() =>
          options?.EX
            ? publisher.set(key, value, { expiration: { type: "EX", value: options.EX } })
            : publisher.set(key, value),
        ),
      get: (key) => published(() => publisher.get(key)),
      incr: (key) => published(() => publisher.incr(key)),
    },
    subscriber: {
      connect: () => subscribed(async () => undefined),
      // The callback itself is the listener, so that unsubscribing it finds it: node-redis
      // drops that one listener and unsubscribes from Redis when the channel's last one goes.
      subscribe: (channel, callback) => subscribed(() => subscriber.subscribe(channel, callback)),
      unsubscribe: (channel, callback) =>
        subscribed(() => subscriber.unsubscribe(channel, callback)),
    },
  };
}

/**
 * Runs operations on `client` once it is ready, and fails them when it is not: those that come
 * while the first connection is made (it connects lazily) wait for it, up to CONNECT_WAIT_MS;
 * later ones do not wait for a Redis that did not answer. An operation whose answer takes longer than
 * ANSWER_WAIT_MS fails, and so does every later one at once until that answer (or the error
 * that ends its connection) comes: a Redis that hangs costs the first operation two seconds,
 * not every one.
 */
function answering(client: ReturnType<typeof createClient>) {
  let firstWait: Promise<unknown> | undefined;
  let waitedOut = false;
  let unanswered: Promise<unknown> | undefined;
  const ready = async () => {
    if (client.isReady) return;
    firstWait ??= Promise.race([
      client.connect().catch(() => undefined),
      sleep(CONNECT_WAIT_MS),
    ]).finally(() => {
      waitedOut = true;
    });
    if (!waitedOut) await firstWait;
    if (!client.isReady) throw new Error("the live bus's Redis is unavailable");
  };
  return async <T>(operation: () => Promise<T>): Promise<T> => {
    await ready();
    if (unanswered) throw new Error("the live bus's Redis is not answering");
    const answer = operation();
    const deadline = new AbortController();
    const late = sleep(ANSWER_WAIT_MS, undefined, { signal: deadline.signal }).then(() => {
      const waiting = answer.catch(() => undefined);
      unanswered = waiting;
      void waiting.then(() => {
        if (unanswered === waiting) unanswered = undefined;
      });
      throw new Error(`the live bus's Redis did not answer in ${ANSWER_WAIT_MS / 1000} s`);
    });
    try {
      return await Promise.race([answer, late]);
    } finally {
      deadline.abort();
    }
  };
}

/**
 * The memory bus drops expired keys once it holds this many, and next once it holds twice what
 * the sweep left: resumable-stream keeps a key a day per stream, so a busy instance holds more
 * live keys than this all day, and walking them all on every write cost each turn more.
 */
const SWEEP_AT = 1_000;

/** A bus in this process's memory: keys with expiry, channels with listeners. */
export function memoryBus(now: () => number = Date.now): LiveBus {
  const values = new Map<string, { value: string; expiresAt: number }>();
  const channels = new Map<string, Set<Listener>>();
  let sweepAt = SWEEP_AT;
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
        if (values.size > sweepAt) {
          for (const known of [...values.keys()]) read(known);
          sweepAt = Math.max(SWEEP_AT, 2 * values.size);
        }
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
      unsubscribe: async (channel, callback) => {
        const listeners = channels.get(channel);
        if (callback) listeners?.delete(callback);
        if (!callback || listeners?.size === 0) channels.delete(channel);
      },
    },
  };
}
