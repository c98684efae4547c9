/**
 * Per-user daily quotas (DESIGN §16): messages (turns started) and provider tokens, each an
 * admin-set default a user's own override replaces. A turn is admitted while both are under
 * their limit; the tokens it then spends are added as the provider reports them, so the turn
 * that crosses the line finishes and the next one is refused. While it runs it holds an estimate
 * of its tokens (lib/db/queries/usage.ts), so turns started together stop at the limit too.
 */
import type { Db } from "@/lib/db/client";
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
};

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
): Promise<QuotaTicket> {
  const day = usageDayOf(now);
  const taken = await takeMessageWithinLimits(db, userId, day, model);
  if (!taken.allowed) throw model.notAllowed();
  if (!taken.usage) {
    throw quotaExceeded(taken.limits, await usageOn(db, userId, day), now);
  }
  let released: Promise<void> | undefined;
  const from = { userId, day, resets: taken.resets };
  const giveBack = () => returnMessage(db, from);
  const release = () => {
    released ??= releaseHeldTokens(db, from, taken.heldTokens);
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

/**
 * Whether the user's day still has tokens: asked before each further step of a turn's tool
 * loop, so a long loop stops near the limit instead of running on past it (a step's own tokens
 * are recorded as it ends, not waited for, so the loop stops a step or two late). The tokens the
 * asking turn holds are its own estimate, not spent: they do not count against it.
 */
export async function hasTokensLeft(
  db: Db,
  userId: string,
  ownHeldTokens = 0,
  now: Date = new Date(),
): Promise<boolean> {
  return (await tokensOn(db, userId, now, ownHeldTokens)).left;
}

/** The user's limits and usage of the day, and whether its token limit leaves any. */
async function tokensOn(db: Db, userId: string, now: Date, ownHeldTokens = 0) {
  const { limits, usage } = await limitsAndUsageOn(db, userId, usageDayOf(now));
  const left =
    limits.dailyTokenLimit === null || usage.tokens - ownHeldTokens < limits.dailyTokenLimit;
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

function quotaExceeded(limits: QuotaLimits, usage: DayUsage, now: Date): TooManyRequestsError {
  const resetsAt = quotaResetAt(now);
  const messagesOut =
    limits.dailyMessageLimit !== null && usage.messages >= limits.dailyMessageLimit;
  const what = messagesOut
    ? `all ${count(limits.dailyMessageLimit ?? 0, "message")} of today's quota`
    : `today's quota of ${count(limits.dailyTokenLimit ?? 0, "token")}`;
  return new TooManyRequestsError(
    messagesOut ? "too_many_requests:message_quota" : "too_many_requests:token_quota",
    `You have used ${what}. It resets at midnight UTC, in ${formatWait(now, resetsAt)}.`,
    resetsAt,
  );
}

function count(n: number, noun: string): string {
  return `${n.toLocaleString("en-US")} ${noun}${n === 1 ? "" : "s"}`;
}
