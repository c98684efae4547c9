/**
 * Per-user daily quotas (DESIGN §16): messages (turns started) and provider tokens, each an
 * admin-set default a user's own override replaces. A turn is admitted while both are under
 * their limit; the tokens it then spends are added as the provider reports them, so the turn
 * that crosses the line finishes and the next one is refused. While it runs it holds an estimate
 * of its tokens (lib/db/queries/usage.ts), so turns started together stop at the limit too.
 */

import { countOf } from "@/lib/count-text";
import type { Db } from "@/lib/db/client";
import { turnsRunningElsewhere } from "@/lib/db/queries/chats";
import type { QuotaLimits } from "@/lib/db/queries/quota-defaults";
import {
  addTokens,
  type DayUsage,
  limitsAndUsageOn,
  releaseHeldTokens,
  returnMessage,
  takeMessageWithinLimits,
  usageOn,
} from "@/lib/db/queries/usage";
import { log } from "@/lib/log";
import { formatWait, quotaResetAt, usageDayOf } from "./quota-day";
import { TooManyRequestsError } from "./too-many-requests";

export type { QuotaLimits } from "@/lib/db/queries/quota-defaults";

/**
 * What a turn took from the day's quota, and how to give it back if the turn never starts; the
 * tokens it holds while it runs (`heldTokens`), which `release` takes off when it ends, however
 * it ends (once, whoever calls it).
 */
export type QuotaTicket = {
  usage: DayUsage;
  giveBack: () => Promise<void>;
  heldTokens: number;
  release: () => Promise<void>;
  /** A turn that never started: its message and its held tokens both go back. */
  withdraw: () => Promise<void>;
  /**
   * Whether today still has tokens for this turn's next provider call: asked before each further
   * step of its tool loop, before a retry, and before a compaction it starts once it ends.
   */
  tokensLeft: (now?: Date) => Promise<boolean>;
};

/**
 * How long after a failed release of a turn's held tokens it is tried again (a database that
 * dropped the statement as the turn ended). Left on the day, the estimate would count as spent
 * until midnight; a release that did commit but whose answer was lost comes off twice, which
 * the day's count clamps at zero (at most one estimate the user gets back).
 */
const RELEASE_RETRY_MS = [1_000, 5_000, 30_000];

/**
 * Takes one message from today's quota for a turn on `model`, or throws: `notAllowed` when the
 * allow-list leaves the model out (checked in the same statement), else a 429 that says when
 * the quota resets.
 */
export async function takeTurnQuota(
  db: Db,
  userId: string,
  model: { provider: string; model: string; notAllowed: () => Error },
  now: Date = new Date(),
  /** The chat the turn is for: turns running in the user's other chats hold tokens of the day. */
  chatId?: string,
): Promise<QuotaTicket> {
  const day = usageDayOf(now);
  const taken = await takeMessageWithinLimits(db, userId, day, model);
  if (!taken.allowed) throw model.notAllowed();
  if (!taken.usage) {
    const [usage, runningElsewhere] = await Promise.all([
      usageOn(db, userId, day),
      turnsRunningElsewhere(db, userId, chatId),
    ]);
    throw quotaExceeded(taken.limits, usage, now, runningElsewhere);
  }
  const from = { userId, day, resets: taken.resets };
  const giveBack = () => returnMessage(db, from);
  // On the day until a release commits.
  let held = taken.heldTokens > 0;
  const releaseOnce = () =>
    releaseHeldTokens(db, from, taken.heldTokens).then(() => {
      held = false;
    });
  const retryRelease = (attempt: number) => {
    const wait = RELEASE_RETRY_MS[attempt];
    if (wait === undefined) {
      log.error({ userId, day, tokens: taken.heldTokens }, "held tokens stay on the day");
      return;
    }
    setTimeout(() => {
      releaseOnce().catch((error) => {
        log.warn({ err: error, userId }, "releasing held tokens failed again");
        retryRelease(attempt + 1);
      });
    }, wait).unref();
  };
  let released: Promise<void> | undefined;
  const release = () => {
    released ??= releaseOnce().catch((error: unknown) => {
      retryRelease(0);
      throw error;
    });
    return released;
  };
  return {
    usage: taken.usage,
    giveBack,
    heldTokens: taken.heldTokens,
    release,
    withdraw: async () => {
      await Promise.all([giveBack(), release()]);
    },
    tokensLeft: async (now = new Date()) => {
      const today = usageDayOf(now);
      const { limits, usage, resets } = await limitsAndUsageOn(db, userId, today);
      // The turn's own estimate is not spent: it comes off the count while the count holds it
      // (not once released, nor on a day that started since, nor after an admin's reset).
      const own = held && today === day && resets === taken.resets ? taken.heldTokens : 0;
      return limits.dailyTokenLimit === null || usage.tokens - own < limits.dailyTokenLimit;
    },
  };
}

/**
 * Work that calls a provider outside a turn (Compact now) takes no message from the day, but
 * spends tokens: a 429 once today's token quota is used up, as the next turn would get.
 */
export async function assertTokensLeft(
  db: Db,
  userId: string,
  now: Date = new Date(),
): Promise<void> {
  const { limits, usage, left } = await tokensOn(db, userId, now);
  if (left) return;
  throw quotaExceeded(
    { dailyTokenLimit: limits.dailyTokenLimit, dailyMessageLimit: null },
    usage,
    now,
  );
}

/** The user's limits and usage of the day, and whether its token limit leaves any. */
async function tokensOn(db: Db, userId: string, now: Date) {
  const { limits, usage } = await limitsAndUsageOn(db, userId, usageDayOf(now));
  const left = limits.dailyTokenLimit === null || usage.tokens < limits.dailyTokenLimit;
  return { limits, usage, left };
}

/** Adds tokens a provider reported to the user's day. */
export function recordTokens(
  db: Db,
  userId: string,
  tokens: number,
  now: Date = new Date(),
): Promise<void> {
  return addTokens(db, userId, usageDayOf(now), tokens);
}

/**
 * While other turns of the user run, the day counts an estimate of each one's tokens until it
 * ends: a day "used up" then may be only held, and free again in seconds. Asked to come back
 * after this long, not at midnight.
 */
const HELD_RETRY_MS = 30_000;

function quotaExceeded(
  limits: QuotaLimits,
  usage: DayUsage,
  now: Date,
  runningElsewhere = 0,
): TooManyRequestsError {
  const resetsAt = quotaResetAt(now);
  const messagesOut =
    limits.dailyMessageLimit !== null && usage.messages >= limits.dailyMessageLimit;
  const code = messagesOut ? "too_many_requests:message_quota" : "too_many_requests:token_quota";
  // A limit of 0 is no allowance at all: nothing was used, and midnight brings none.
  if ((messagesOut ? limits.dailyMessageLimit : limits.dailyTokenLimit) === 0) {
    return new TooManyRequestsError(
      code,
      `Your account has no daily ${messagesOut ? "message" : "token"} allowance, so it cannot send messages. Ask an admin to set one.`,
      null,
    );
  }
  const what = messagesOut
    ? `all ${countOf(limits.dailyMessageLimit ?? 0, "message")} of today's quota`
    : `today's quota of ${countOf(limits.dailyTokenLimit ?? 0, "token")}`;
  if (!messagesOut && runningElsewhere > 0) {
    const replies = runningElsewhere === 1 ? "reply" : "replies";
    return new TooManyRequestsError(
      code,
      `Today's tokens are used up or held by your ${replies} still being written in other chats (${countOf(limits.dailyTokenLimit ?? 0, "token")} a day). Try again once ${runningElsewhere === 1 ? "it finishes" : "they finish"}.`,
      new Date(now.getTime() + HELD_RETRY_MS),
    );
  }
  return new TooManyRequestsError(
    code,
    `You have used ${what}. It resets at midnight UTC, in ${formatWait(now, resetsAt)}.`,
    resetsAt,
  );
}
