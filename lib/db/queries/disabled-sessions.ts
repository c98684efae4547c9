import { and, eq, gt, lte, sql } from "drizzle-orm";
import type { Db } from "../client";
import { disabledSession, user } from "../schema";

/** A session a disable ended: its token's hash, and when it would have run out on its own. */
export type EndedSession = Pick<typeof disabledSession.$inferInsert, "tokenHash" | "expiresAt">;

/**
 * Keeps the sessions that ended when an admin disabled `userId`'s account, while each would
 * still have been valid. The rows of any account whose sessions have run out since go now: a
 * disable is rare, and an account that stays disabled is never enabled to clear them.
 */
export async function rememberDisabledSessions(
  db: Db,
  userId: string,
  sessions: readonly EndedSession[],
  now: Date = new Date(),
): Promise<void> {
  await db.delete(disabledSession).where(lte(disabledSession.expiresAt, now));
  const live = sessions.filter((s) => s.expiresAt > now);
  if (live.length === 0) return;
  await db
    .insert(disabledSession)
    .values(live.map(({ tokenHash, expiresAt }) => ({ tokenHash, userId, expiresAt })))
    .onConflictDoNothing({ target: disabledSession.tokenHash });
}

/** Forgets them once the account is no longer disabled: an old cookie is then just signed out. */
export async function forgetDisabledSessions(db: Db, userId: string): Promise<void> {
  await db.delete(disabledSession).where(eq(disabledSession.userId, userId));
}

/**
 * Whether the session with this token hash ended by a disable, its account still is, and it
 * would not have run out by now (a cookie that old is just signed out).
 */
export async function isDisabledSession(
  db: Db,
  tokenHash: string,
  now: Date = new Date(),
): Promise<boolean> {
  const rows = await db
    .select({ found: sql`1` })
    .from(disabledSession)
    .innerJoin(user, eq(user.id, disabledSession.userId))
    .where(
      and(
        eq(disabledSession.tokenHash, tokenHash),
        gt(disabledSession.expiresAt, now),
        eq(user.status, "disabled"),
      ),
    )
    .limit(1);
  return rows.length > 0;
}
