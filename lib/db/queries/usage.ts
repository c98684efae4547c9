import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../client";
import { usageDay } from "../schema";

export type DayUsage = { messages: number; tokens: number };
/** A daily limit; null means none. */
export type DailyLimit = number | null;

const NONE: DayUsage = { messages: 0, tokens: 0 };

/**
 * Counts one more message for the day if both limits still have room, in one statement, so
 * two turns started together cannot both take the last message. Null when a limit is reached.
 */
export async function takeMessage(
  db: Db,
  userId: string,
  day: string,
  limits: { messages: DailyLimit; tokens: DailyLimit },
): Promise<DayUsage | null> {
  // A limit of zero refuses even the first message, which the insert below would let through.
  if (limits.messages === 0 || limits.tokens === 0) return null;
  const room = [];
  if (limits.messages !== null) room.push(sql`${usageDay.messages} < ${limits.messages}`);
  if (limits.tokens !== null) room.push(sql`${usageDay.tokens} < ${limits.tokens}`);
  const [row] = await db
    .insert(usageDay)
    .values({ userId, day, messages: 1, tokens: 0 })
    .onConflictDoUpdate({
      target: [usageDay.userId, usageDay.day],
      set: { messages: sql`${usageDay.messages} + 1` },
      setWhere: room.length > 0 ? and(...room) : undefined,
    })
    .returning({ messages: usageDay.messages, tokens: usageDay.tokens });
  return row ?? null;
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
  await db
    .insert(usageDay)
    .values({ userId, day, messages: 0, tokens })
    .onConflictDoUpdate({
      target: [usageDay.userId, usageDay.day],
      set: { tokens: sql`${usageDay.tokens} + ${tokens}` },
    });
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
