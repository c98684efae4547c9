import { randomUUID } from "node:crypto";
import { and, eq, gt, sql } from "drizzle-orm";
import type { Db } from "@/lib/db/client";
import { prepared } from "@/lib/db/prepared";
import { session as sessionTable, user as userTable } from "@/lib/db/schema";

/**
 * How long better-auth's signed session cookie may stand in for its session
 * lookup. Not how long a revoked session lives: see `cookieCacheVersion`.
 */
export const SESSION_COOKIE_CACHE_SECONDS = 5 * 60;

/**
 * The cookie cache's version check, run on every request the cache answers:
 * one query that the session row still exists and that the user's role and
 * status are still the ones cached. Anything else yields a version that never
 * matches, so better-auth drops the cache and reads the database — a sign-out
 * elsewhere, a disabled account or a role change applies at once, and the
 * cache only saves better-auth's own lookups.
 */
export function cookieCacheVersion(db: Db) {
  return async (
    session: { token: string },
    user: { id: string } & Record<string, unknown>,
  ): Promise<string> => {
    const standing = await sessionStanding(db, session.token, user.id);
    if (!standing || standing.role !== user.role || standing.status !== user.status)
      return `stale-${randomUUID()}`;
    return `${standing.role}:${standing.status}`;
  };
}

/** The user's role and status while this session row exists and has not expired; else null. */
export async function sessionStanding(
  db: Db,
  token: string,
  userId: string,
): Promise<{ role: string; status: string } | null> {
  const query = prepared(db, "session_role_status", (on, name) =>
    on
      .select({ role: userTable.role, status: userTable.status })
      .from(sessionTable)
      .innerJoin(userTable, eq(userTable.id, sessionTable.userId))
      .where(
        and(
          eq(sessionTable.token, sql.placeholder("token")),
          eq(sessionTable.userId, sql.placeholder("userId")),
          gt(sessionTable.expiresAt, sql.placeholder("now")),
        ),
      )
      .prepare(name),
  );
  const [row] = await query.execute({ token, userId, now: new Date() });
  return row ?? null;
}
