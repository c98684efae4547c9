import { randomUUID } from "node:crypto";
import { z } from "zod";
import { log } from "@/lib/log";
import type { LiveBus } from "./bus";

/**
 * Window cache evictions, across instances: each instance caches a model's context window for
 * up to an hour, and an admin's override, a Forget, or a cut a turn observed changes it through
 * one instance. That instance evicts at once and announces it here; every other instance hears
 * it and evicts too.
 */
const CHANNEL = "fold:window-evict";

/** After the bus refused to carry other instances' evictions, the next try waits this long. */
export const EVICTION_LISTEN_RETRY_MS = 30_000;

/** One model's window to forget; `from` is the instance that forgot it already. */
const windowEviction = z.object({ from: z.string(), provider: z.string(), model: z.string() });
export type WindowEviction = z.infer<typeof windowEviction>;

export type SharedEvictions = {
  /** Tells the other instances to forget the model's window (this one has, at once). */
  announce(provider: string, model: string): void;
  /**
   * Starts hearing the other instances' evictions unless it does already; settles once they
   * are heard, or hearing them failed (logged, and tried again on a later call).
   */
  listen(): Promise<void>;
};

/** One instance's side of the channel: `forget` evicts a model's window from its cache. */
export function shareEvictions(
  bus: LiveBus,
  forget: (provider: string, model: string) => void,
  now: () => number = Date.now,
): SharedEvictions {
  // Names this instance, so that it does not forget again what it forgot itself.
  const self = randomUUID();
  let listening: Promise<void> | undefined;
  let failedAt = Number.NEGATIVE_INFINITY;
  return {
    announce(provider, model) {
      announceWindowEviction(bus, { from: self, provider, model }).catch((error: unknown) =>
        log.warn({ err: error, provider, model }, "window eviction: not announced"),
      );
    },
    listen() {
      // Until it listens, other instances' edits reach this one within the cache's TTL.
      if (!listening && now() - failedAt >= EVICTION_LISTEN_RETRY_MS) {
        listening = watchWindowEvictions(bus, self, forget).then(
          () => undefined,
          (error: unknown) => {
            listening = undefined;
            failedAt = now();
            log.warn({ err: error }, "window eviction: other instances' are not heard");
          },
        );
      }
      return listening ?? Promise.resolve();
    },
  };
}

export async function announceWindowEviction(
  bus: LiveBus,
  eviction: WindowEviction,
): Promise<void> {
  await bus.publisher.publish(CHANNEL, JSON.stringify(eviction));
}

/**
 * Calls `onEvict` for every eviction an instance other than `self` announces; the returned
 * function stops listening.
 */
export async function watchWindowEvictions(
  bus: LiveBus,
  self: string,
  onEvict: (provider: string, model: string) => void,
): Promise<() => Promise<void>> {
  let listening = true;
  const listener = (message: string) => {
    if (!listening) return;
    const eviction = evictionOf(message);
    if (eviction && eviction.from !== self) onEvict(eviction.provider, eviction.model);
  };
  const unwatch = async () => {
    listening = false;
    await bus.subscriber.unsubscribe(CHANNEL, listener);
  };
  try {
    await bus.subscriber.subscribe(CHANNEL, listener);
  } catch (error) {
    // Given up on (Redis answered late), the subscription may still land: it must not stay
    // beside the one a later try adds.
    void unwatch().catch(() => undefined);
    throw error;
  }
  return unwatch;
}

/** A message this version cannot read is no eviction. */
function evictionOf(message: string): WindowEviction | null {
  try {
    return windowEviction.parse(JSON.parse(message));
  } catch {
    return null;
  }
}
