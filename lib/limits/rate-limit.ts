/**
 * Rate limits for sign-in, sign-up, turns, Compact now, new chats and Continue in a new chat
 * (DESIGN §16), kept where every instance sees them: Redis when REDIS_URL is set, else the
 * database through rate-limiter-flexible's Drizzle store (Postgres, or PGlite for a single
 * embedded instance).
 */
import {
  RateLimiterDrizzle,
  type RateLimiterInsuredAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  RLWrapperTimeouts,
} from "rate-limiter-flexible";
import { createClient } from "redis";
import { type Db, getDb } from "@/lib/db/client";
import { rateLimit } from "@/lib/db/schema";
import { env } from "@/lib/env";
import { log } from "@/lib/log";
import { formatWait } from "./quota-day";
import { TooManyRequestsError } from "./too-many-requests";

/** How long the first limited request waits for Redis before the in-memory insurance takes over. */
const REDIS_CONNECT_WAIT_MS = 2_000;
/**
 * How long a limited request waits for Redis's answer before the insurance answers instead
 * (it takes a millisecond when Redis is well): a Redis that stops answering without closing
 * its connection would otherwise hold every sign-in and turn.
 */
const REDIS_ANSWER_WAIT_MS = 1_000;

/** A point is given back only this long before its window ends, or not at all. */
const REFUND_MARGIN_MS = 1_000;

export const RATE_LIMITS = {
  "sign-in": {
    durationSeconds: 60,
    points: () => env().rateLimits.signInPerMinute,
    message: "Too many sign-in attempts from your network.",
  },
  /** Wrong passwords for one account, from any address: many addresses cannot share out a guess. */
  "sign-in-account": {
    durationSeconds: 15 * 60,
    points: () => env().rateLimits.signInFailuresPerAccount,
    message: "Too many wrong passwords for this account.",
  },
  /**
   * Wrong passwords for one account from a browser it signed in on before (sign-in-device.ts),
   * counted apart from strangers' and as many.
   */
  "sign-in-device": {
    durationSeconds: 15 * 60,
    points: () => env().rateLimits.signInFailuresPerAccount,
    message: "Too many wrong passwords for this account from this browser.",
  },
  "sign-up": {
    durationSeconds: 60 * 60,
    points: () => env().rateLimits.signUpPerHour,
    message: "Too many new accounts from your network.",
  },
  turn: {
    durationSeconds: 60,
    points: () => env().rateLimits.turnsPerMinute,
    message: "You are sending messages faster than this server allows.",
  },
  /** Compact now calls the summarizer: as many a minute as turns, counted apart. */
  compact: {
    durationSeconds: 60,
    points: () => env().rateLimits.turnsPerMinute,
    message: "You are compacting faster than this server allows.",
  },
  /**
   * Continue in a new chat copies the pinned and unsummarized messages (up to 100,000
   * characters each) into the new one, with no model call: as many a minute as turns, counted
   * apart, so one user cannot fill the database by asking again and again.
   */
  continue: {
    durationSeconds: 60,
    points: () => env().rateLimits.turnsPerMinute,
    message: "You are starting new chats from this one faster than this server allows.",
  },
  /**
   * A new chat is a row per call (a title of up to its limit, no model call): as many a minute
   * as turns, counted apart, so a script cannot fill the database with empty chats. Opening the
   * unused chat a user already has (New chat again) takes none.
   */
  chat: {
    durationSeconds: 60,
    points: () => env().rateLimits.turnsPerMinute,
    message: "You are starting new chats faster than this server allows.",
  },
} as const;

export type RateLimitName = keyof typeof RATE_LIMITS;
type Limiter = RateLimiterInsuredAbstract;

/**
 * A point spent: `refund` gives it back to the window it was spent in, while that window lasts
 * (given back after, it would be a point more in the next one). It never throws: a store that
 * fails keeps the point spent, which is logged, and the answer the refund came with stands.
 */
export type RatePoint = { refund: () => Promise<void> };

const NO_POINT: RatePoint = { refund: async () => undefined };

/**
 * Spends one point of `name` for `key`; throws a 429 saying when to try again once the
 * window's points are spent. A limit set to 0 is off.
 */
export async function consumeRateLimit(name: RateLimitName, key: string): Promise<RatePoint> {
  const limiter = await limiterFor(name);
  if (!limiter) return NO_POINT;
  try {
    const spent = await limiter.consume(key);
    // A moment early: Redis's count of what is left was read a round trip ago.
    const windowEnds = Date.now() + spent.msBeforeNext - REFUND_MARGIN_MS;
    return {
      refund: async () => {
        if (Date.now() >= windowEnds) return;
        await limiter.reward(key, 1).catch((error: unknown) => {
          log.warn({ err: error, limit: name }, "rate limit: a point could not be given back");
        });
      },
    };
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    throw tooMany(name, rejection.msBeforeNext);
  }
}

/** Forgets what `key` spent of `name` (a right password ends a run of wrong ones). */
export async function resetRateLimit(name: RateLimitName, key: string): Promise<void> {
  const limiter = await limiterFor(name);
  await limiter?.delete(key);
}

function tooMany(name: RateLimitName, msBeforeNext: number): TooManyRequestsError {
  const now = new Date();
  const retryAt = new Date(now.getTime() + Math.max(msBeforeNext, 1_000));
  return new TooManyRequestsError(
    `too_many_requests:${name}`,
    `${RATE_LIMITS[name].message} Try again in ${formatWait(now, retryAt)}.`,
    retryAt,
  );
}

// One set of limiters per database (tests open one per file), and one per Redis URL per process
// (route bundles each hold a copy of this module, so those live on globalThis).
const byDatabase = new WeakMap<Db, Map<RateLimitName, Limiter>>();
type RedisEntry = {
  client: ReturnType<typeof createClient>;
  /** Settles once the first connection attempt did, or after REDIS_CONNECT_WAIT_MS. */
  connecting: Promise<void>;
  limiters: Map<RateLimitName, Limiter>;
};
type RedisHolder = { __foldRateLimitRedis?: Map<string, RedisEntry> };

async function limiterFor(name: RateLimitName): Promise<Limiter | null> {
  if (RATE_LIMITS[name].points() === 0) return null;
  const { redisUrl } = env();
  if (redisUrl) {
    const entry = redisEntry(redisUrl);
    await entry.connecting;
    return cached(entry.limiters, name, () => redisLimiter(name, entry.client));
  }
  const db = await getDb();
  let limiters = byDatabase.get(db);
  if (!limiters) {
    limiters = new Map();
    byDatabase.set(db, limiters);
  }
  return cached(limiters, name, () => databaseLimiter(name, db));
}

function cached(limiters: Map<RateLimitName, Limiter>, name: RateLimitName, make: () => Limiter) {
  let limiter = limiters.get(name);
  if (!limiter) {
    limiter = make();
    limiters.set(name, limiter);
  }
  return limiter;
}

function options(name: RateLimitName) {
  return {
    keyPrefix: `fold:${name}`,
    points: RATE_LIMITS[name].points(),
    duration: RATE_LIMITS[name].durationSeconds,
  };
}

function databaseLimiter(name: RateLimitName, db: Db): Limiter {
  return new RateLimiterDrizzle({ ...options(name), storeClient: db, schema: rateLimit });
}

function redisLimiter(name: RateLimitName, client: RedisEntry["client"]): Limiter {
  const limiter = new RateLimiterRedis({
    ...options(name),
    storeClient: client,
    useRedisPackage: true,
    rejectIfRedisNotReady: true,
    // While Redis is unreachable each instance limits on its own rather than not at all.
    insuranceLimiter: new RateLimiterMemory(options(name)),
  });
  // The wrapper takes the same insurance when Redis is slower than that to answer.
  return new RLWrapperTimeouts({ limiter, timeoutMs: REDIS_ANSWER_WAIT_MS });
}

function redisEntry(url: string): RedisEntry {
  const holder = globalThis as RedisHolder;
  holder.__foldRateLimitRedis ??= new Map();
  let entry = holder.__foldRateLimitRedis.get(url);
  if (!entry) {
    // While Redis is down, commands fail at once (the in-memory insurance answers) instead of
    // queueing until it is back.
    const client = createClient({ url, disableOfflineQueue: true });
    client.on("error", (error: unknown) => log.warn({ err: error }, "rate limit store: redis"));
    const connected = client.connect().then(
      () => undefined,
      () => undefined,
    );
    const waited = new Promise<void>((resolve) =>
      setTimeout(resolve, REDIS_CONNECT_WAIT_MS).unref(),
    );
    entry = { client, connecting: Promise.race([connected, waited]), limiters: new Map() };
    holder.__foldRateLimitRedis.set(url, entry);
  }
  return entry;
}
