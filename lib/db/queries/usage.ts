import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { inIdList } from "../id-list";
import { prepared } from "../prepared";
import { quotaDefault, usageDay, user } from "../schema";
import type { QuotaLimits } from "./quota-defaults";

export type DayUsage = { messages: number; tokens: number };

const NONE: DayUsage = { messages: 0, tokens: 0 };

/**
 * What admitting a turn found: whether the allow-list lets the model through, and the day's usage
 * once a message was taken, with the tokens held for the turn while it runs (`heldTokens`).
 */
export type TakenMessage = {
  allowed: boolean;
  usage: DayUsage | null;
  heldTokens: number;
  /** The day's resets when the message was taken (`usage_day.resets`): what it gives back goes to it only. */
  resets: number;
  limits: QuotaLimits;
};

/**
 * Under a token limit, a turn holds this estimate of what it will spend, added to the day when it
 * is admitted and taken off when it ends (its real tokens are added as the provider reports
 * them): turns started together then cannot all pass a limit that each alone was under. The
 * estimate is the day's tokens per message so far, within these bounds; the day's first turn
 * holds the default.
 */
export const TURN_HOLD_DEFAULT_TOKENS = 4_000;
const TURN_HOLD_MIN_TOKENS = 256;
const TURN_HOLD_MAX_TOKENS = 64_000;

type Count = number | string | null;

/**
 * A user's daily limits: each override of the user's, else the admin default. Both statements
 * below read them from `"user" left join quota_default on true`.
 */
const effectiveLimits = {
  messageLimit: sql<Count>`coalesce(${user.dailyMessageLimit}, ${quotaDefault.dailyMessageLimit})`,
  tokenLimit: sql<Count>`coalesce(${user.dailyTokenLimit}, ${quotaDefault.dailyTokenLimit})`,
};

/** A count as Postgres returns it (node-postgres gives a bigint as a string), or null. */
const countOf = (value: Count | undefined) =>
  value === null || value === undefined ? null : Number(value);

/**
 * Counts one more message for the day if the allow-list lets the user use `model` and both
 * limits still have room, in one statement, so two turns started together cannot both take
 * the last message. The limits — each override of the user's, or else the admin default —
 * and the model's access are read in the same statement: admitting a turn is one round trip.
 * `usage` is null when nothing was taken: the model is not allowed, or a limit is reached (a
 * limit of zero refuses even the first message); `limits` are the ones it applied.
 */
export async function takeMessageWithinLimits(
  db: Db,
  userId: string,
  day: string,
  model: { provider: string; model: string },
): Promise<TakenMessage> {
  // Prepared: every turn is admitted through it (Postgres then skips parsing and planning it).
  const query = prepared(db, "take_message_within_limits", (on, name) => {
    const userIdParam = sql.placeholder("userId");
    const providerParam = sql.placeholder("provider");
    const limits = on
      .$with("limits", {
        messageLimit: sql<Count>`message_limit`.as("message_limit"),
        tokenLimit: sql<Count>`token_limit`.as("token_limit"),
      })
      .as(sql`
        select ${effectiveLimits.messageLimit} as message_limit,
               ${effectiveLimits.tokenLimit} as token_limit
        from ${user} left join ${quotaDefault} on true
        where ${user.id} = ${userIdParam}`);
    const access = on.$with("access", { allowed: sql<boolean>`allowed`.as("allowed") }).as(sql`
        select not exists (
                 select 1 from provider_access
                 where provider = ${providerParam} and restricted
               )
               or exists (
                 select 1 from allowed_model
                 where provider = ${providerParam} and model = ${sql.placeholder("model")}
               ) as allowed`);
    const dayParam = sql.placeholder("day");
    const hold = on.$with("hold", { tokens: sql<Count>`tokens`.as("tokens") }).as(sql`
        select case
                 when limits.token_limit is null then 0
                 when coalesce(usage_day.messages, 0) = 0 then ${sql.raw(String(TURN_HOLD_DEFAULT_TOKENS))}
                 else least(greatest(ceil(usage_day.tokens::numeric / usage_day.messages),
                                     ${sql.raw(String(TURN_HOLD_MIN_TOKENS))}),
                            ${sql.raw(String(TURN_HOLD_MAX_TOKENS))})
               end::bigint as tokens
        from limits left join usage_day
          on usage_day.user_id = ${userIdParam} and usage_day.day = ${dayParam}`);
    const taken = on
      .$with("taken", {
        messages: sql<Count>`messages`.as("messages"),
        tokens: sql<Count>`tokens`.as("tokens"),
        resets: sql<number>`resets`.as("resets"),
      })
      .as(sql`
        insert into usage_day (user_id, day, messages, tokens)
        select ${userIdParam}, ${dayParam}, 1, hold.tokens from limits, access, hold
        where access.allowed and coalesce(message_limit, 1) <> 0 and coalesce(token_limit, 1) <> 0
        on conflict (user_id, day) do update
          set messages = usage_day.messages + 1,
              tokens = usage_day.tokens + (select tokens from hold)
        where ((select message_limit from limits) is null
               or usage_day.messages < (select message_limit from limits))
          and ((select token_limit from limits) is null
               or usage_day.tokens < (select token_limit from limits))
        returning messages, tokens, resets`);
    return on
      .with(limits, access, hold, taken)
      .select({
        allowed: access.allowed,
        messages: taken.messages,
        tokens: taken.tokens,
        resets: taken.resets,
        held: sql<Count>`(select tokens from hold)`,
        messageLimit: sql<Count>`(select message_limit from limits)`,
        tokenLimit: sql<Count>`(select token_limit from limits)`,
      })
      .from(access)
      .leftJoin(taken, sql`true`)
      .prepare(name);
  });
  const rows = await query.execute({
    userId,
    day,
    provider: model.provider,
    model: model.model,
  });
  const [row] = rows;
  if (!row) throw new Error("admitting a turn returned no row");
  const usage =
    row.messages === null ? null : { messages: Number(row.messages), tokens: Number(row.tokens) };
  return {
    allowed: row.allowed === true,
    usage,
    heldTokens: usage === null ? 0 : (countOf(row.held) ?? 0),
    resets: row.resets ?? 0,
    limits: {
      dailyMessageLimit: countOf(row.messageLimit),
      dailyTokenLimit: countOf(row.tokenLimit),
    },
  };
}

/** The user's limits (each override, else the admin default) and the day's usage, in one statement. */
export async function limitsAndUsageOn(
  db: Db,
  userId: string,
  day: string,
): Promise<{ limits: QuotaLimits; usage: DayUsage; resets: number }> {
  const [row] = await db
    .select({
      dailyMessageLimit: effectiveLimits.messageLimit,
      dailyTokenLimit: effectiveLimits.tokenLimit,
      messages: usageDay.messages,
      tokens: usageDay.tokens,
      resets: usageDay.resets,
    })
    .from(user)
    .leftJoin(quotaDefault, sql`true`)
    .leftJoin(usageDay, and(eq(usageDay.userId, user.id), eq(usageDay.day, day)))
    .where(eq(user.id, userId));
  return {
    limits: {
      dailyMessageLimit: countOf(row?.dailyMessageLimit),
      dailyTokenLimit: countOf(row?.dailyTokenLimit),
    },
    usage: { messages: row?.messages ?? 0, tokens: row?.tokens ?? 0 },
    // A day without a row yet has never been reset.
    resets: row?.resets ?? 0,
  };
}

/** The day a message was taken from, as it stood then: `resets` tells whether it was started over since. */
export type TakenFrom = { userId: string; day: string; resets: number };

/** The day's row while no reset came after the message was taken. */
const stillDayOf = (from: TakenFrom) =>
  and(
    eq(usageDay.userId, from.userId),
    eq(usageDay.day, from.day),
    eq(usageDay.resets, from.resets),
  );

/**
 * Gives back a message taken for a turn that then did not start. After a reset it went with the
 * day's count: nothing is taken off the turns counted since.
 */
export async function returnMessage(db: Db, from: TakenFrom): Promise<void> {
  await db
    .update(usageDay)
    .set({ messages: sql`greatest(${usageDay.messages} - 1, 0)` })
    .where(stillDayOf(from));
}

/**
 * Takes off the day the tokens a turn held while it ran (`TakenMessage.heldTokens`). After a
 * reset they went with the day's count: the tokens spent since stay counted.
 */
export async function releaseHeldTokens(db: Db, from: TakenFrom, tokens: number): Promise<void> {
  if (tokens <= 0) return;
  await db
    .update(usageDay)
    .set({ tokens: sql`greatest(${usageDay.tokens} - ${tokens}, 0)` })
    .where(stillDayOf(from));
}

export async function addTokens(db: Db, userId: string, day: string, tokens: number) {
  if (tokens <= 0) return;
  // Prepared: every provider call of every turn adds its tokens.
  const query = prepared(db, "add_tokens", (on, name) =>
    on
      .insert(usageDay)
      .values({
        userId: sql.placeholder("userId"),
        day: sql.placeholder("day"),
        messages: 0,
        tokens: sql.placeholder("tokens"),
      })
      .onConflictDoUpdate({
        target: [usageDay.userId, usageDay.day],
        set: { tokens: sql`${usageDay.tokens} + ${sql.placeholder("tokens")}` },
      })
      .prepare(name),
  );
  await query.execute({ userId, day, tokens });
}

export async function usageOn(db: Db, userId: string, day: string): Promise<DayUsage> {
  const [row] = await db
    .select({ messages: usageDay.messages, tokens: usageDay.tokens })
    .from(usageDay)
    .where(and(eq(usageDay.userId, userId), eq(usageDay.day, day)));
  return row ?? NONE;
}

/** The day's usage of many users; a user with none is missing from the map. */
export async function usageOfUsers(
  db: Db,
  userIds: readonly string[],
  day: string,
): Promise<Map<string, DayUsage>> {
  if (userIds.length === 0) return new Map();
  // Past 65,535 accounts, one bound value per id could not be sent: the admin's list was a 500.
  const rows = await db
    .select()
    .from(usageDay)
    .where(and(eq(usageDay.day, day), inIdList(usageDay.userId, userIds)));
  return new Map(rows.map((r) => [r.userId, { messages: r.messages, tokens: r.tokens }]));
}

/**
 * Forgets a user's usage of the day: the quota starts over. The row stays, counting the reset,
 * so a turn admitted before it gives nothing back to the day after it (`returnMessage`,
 * `releaseHeldTokens`); what such a turn spends from now on is counted.
 */
export async function clearUsage(db: Db, userId: string, day: string): Promise<void> {
  await db
    .update(usageDay)
    .set({ messages: 0, tokens: 0, resets: sql`${usageDay.resets} + 1` })
    .where(and(eq(usageDay.userId, userId), eq(usageDay.day, day)));
}
