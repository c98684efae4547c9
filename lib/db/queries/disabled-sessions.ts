import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { disabledSession, user } from "../schema";

/** Keeps the token hashes of sessions that ended when an admin disabled `userId`'s account. */
export async function rememberDisabledSessions(
  db: Db,
  userId: string,
  tokenHashes: readonly string[],
): Promise<void> {
  if (tokenHashes.length === 0) return;
  await db
    .insert(disabledSession)
    .values(tokenHashes.map((tokenHash) => ({ tokenHash, userId })))
    .onConflictDoNothing({ target: disabledSession.tokenHash });
}

/** Forgets them once the account is no longer disabled: an old cookie is then just signed out. */
export async function forgetDisabledSessions(db: Db, userId: string): Promise<void> {
  await db.delete(disabledSession).where(eq(disabledSession.userId, userId));
}

/** Whether the session with this token hash ended by a disable, and its account still is. */
export async function isDisabledSession(db: Db, tokenHash: string): Promise<boolean> {
  const rows = await db
    .select({ found: sql`1` })
    .from(disabledSession)
    .innerJoin(user, eq(user.id, disabledSession.userId))
    .where(and(eq(disabledSession.tokenHash, tokenHash), eq(user.status, "disabled")))
    .limit(1);
  return rows.length > 0;
}
