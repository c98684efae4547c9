import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../client";
import { prepared } from "../prepared";
import { quotaDefault, usageDay, user } from "../schema";
import type { QuotaLimits } from "./quota-defaults";

export type DayUsage = { messages: number; tokens: number };

const NONE: DayUsage = { messages: 0, tokens: 0 };

/** What admitting a turn found: whether the allow-list lets the model through, and the day's usage once a message was taken. */
export type TakenMessage = { allowed: boolean; usage: DayUsage | null; limits: QuotaLimits };

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
    const taken = on
      .$with("taken", {
        messages: sql<Count>`messages`.as("messages"),
        tokens: sql<Count>`tokens`.as("tokens"),
      })
      .as(sql`
        insert into usage_day (user_id, day, messages, tokens)
        select ${userIdParam}, ${sql.placeholder("day")}, 1, 0 from limits, access
        where access.allowed and coalesce(message_limit, 1) <> 0 and coalesce(token_limit, 1) <> 0
        on conflict (user_id, day) do update set messages = usage_day.messages + 1
        where ((select message_limit from limits) is null
               or usage_day.messages < (select message_limit from limits))
          and ((select token_limit from limits) is null
               or usage_day.tokens < (select token_limit from limits))
        returning messages, tokens`);
    return on
      .with(limits, access, taken)
      .select({
        allowed: access.allowed,
        messages: taken.messages,
        tokens: taken.tokens,
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
): Promise<{ limits: QuotaLimits; usage: DayUsage }> {
  const [row] = await db
    .select({
      dailyMessageLimit: effectiveLimits.messageLimit,
      dailyTokenLimit: effectiveLimits.tokenLimit,
      messages: usageDay.messages,
      tokens: usageDay.tokens,
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
  };
}

/** Gives back a message taken for a turn that then did not start. */
export async function returnMessage(db: Db, userId: string, day: string): Promise<void> {
  await db
    .update(usageDay)
    .set({ messages: sql`greatest(${usageDay.messages} - 1, 0)` })
    .where(and(eq(usageDay.userId, userId), eq(usageDay.day, day)));
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
  const rows = await db
    .select()
    .from(usageDay)
    .where(and(eq(usageDay.day, day), inArray(usageDay.userId, [...userIds])));
  return new Map(rows.map((r) => [r.userId, { messages: r.messages, tokens: r.tokens }]));
}

/** Forgets a user's usage of the day: the quota starts over. */
export async function clearUsage(db: Db, userId: string, day: string): Promise<void> {
  await db.delete(usageDay).where(and(eq(usageDay.userId, userId), eq(usageDay.day, day)));
}
