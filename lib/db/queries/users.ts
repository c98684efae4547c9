import { and, asc, count, eq, ilike, or, sql } from "drizzle-orm";
import type { Db } from "../client";
import { session, type User, type UserStatus, user } from "../schema";

/** Serializes every change to who is admin: the first-admin claim and admin edits. */
export const ADMIN_LOCK_KEY = 7_424_002;

export type UserRole = User["role"];

export async function countUsers(db: Db): Promise<number> {
  const [row] = await db.select({ users: count() }).from(user);
  return row?.users ?? 0;
}

export async function findUser(db: Db, userId: string): Promise<User | null> {
  const [row] = await db.select().from(user).where(eq(user.id, userId));
  return row ?? null;
}

/** Where an account stands in the admin's list: accounts waiting for approval first, then by age. */
const listRank = sql<number>`case when ${user.status} = 'pending' then 0 else 1 end`;
/** Its creation time in microseconds, as Postgres keeps it (a JavaScript Date has milliseconds). */
const createdMicros = sql<string>`(extract(epoch from ${user.createdAt}) * 1000000)::bigint::text`;

/** The place of the last account of a page: the next one starts after it. */
export type UserListCursor = { rank: number; createdMicros: string; id: string };

/**
 * One page of accounts for the admin's list, waiting ones first, then oldest first: the `limit`
 * after `after` among those whose name or address holds `search` (case aside), with the place of
 * its last one, and how many there are in all.
 */
export async function listUsers(
  db: Db,
  page: { search?: string; after?: UserListCursor; limit: number },
): Promise<{ users: User[]; last: UserListCursor | null; total: number; more: boolean }> {
  // One Unicode form on both sides: "Zoë" typed composed finds a name stored decomposed.
  const search = page.search?.normalize("NFC");
  const pattern = search ? `%${search.replace(/[\\%_]/g, "\\$&")}%` : undefined;
  const matches = pattern
    ? or(sql`normalize(${user.name}, NFC) ilike ${pattern}`, ilike(user.email, pattern))
    : undefined;
  const after = page.after
    ? sql`(${listRank}, (extract(epoch from ${user.createdAt}) * 1000000)::bigint, ${user.id}) >
        (${page.after.rank}, ${page.after.createdMicros}::bigint, ${page.after.id})`
    : undefined;
  const [rows, [counted]] = await Promise.all([
    db
      .select({ row: user, rank: listRank, createdMicros })
      .from(user)
      .where(and(matches, after))
      .orderBy(listRank, asc(user.createdAt), asc(user.id))
      // One past the page: whether another follows (a full page may be the last).
      .limit(page.limit + 1),
    db.select({ total: count() }).from(user).where(matches),
  ]);
  const more = rows.length > page.limit;
  if (more) rows.pop();
  const tail = rows[rows.length - 1];
  return {
    more,
    users: rows.map((r) => r.row),
    last: tail
      ? { rank: Number(tail.rank), createdMicros: tail.createdMicros, id: tail.row.id }
      : null,
    total: counted?.total ?? 0,
  };
}

/** Takes the admin lock for the rest of the transaction `tx`. */
export async function lockAdmins(tx: Db): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${ADMIN_LOCK_KEY})`);
}

/**
 * Makes the user the admin (and active) if there is no admin yet. Under the admin lock, so of
 * two sign-ups racing on a fresh install exactly one wins; the other keeps the role and status
 * its sign-up gave it. True when this user won.
 */
export async function claimFirstAdmin(db: Db, userId: string): Promise<boolean> {
  return db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    await lockAdmins(tx);
    const claimed = await tx
      .update(user)
      .set({ role: "admin", status: "active", updatedAt: new Date() })
      .where(
        and(
          eq(user.id, userId),
          sql`not exists (select 1 from ${user} as admin where admin.role = 'admin')`,
        ),
      )
      .returning({ id: user.id });
    return claimed.length > 0;
  });
}

export async function statusOf(db: Db, userId: string): Promise<UserStatus | null> {
  const [row] = await db.select({ status: user.status }).from(user).where(eq(user.id, userId));
  return row?.status ?? null;
}

export async function updateUserRow(
  db: Db,
  userId: string,
  patch: Partial<Pick<User, "role" | "status" | "dailyTokenLimit" | "dailyMessageLimit">>,
): Promise<User | null> {
  const [row] = await db
    .update(user)
    .set({
      role: patch.role,
      status: patch.status,
      dailyTokenLimit: patch.dailyTokenLimit,
      dailyMessageLimit: patch.dailyMessageLimit,
      updatedAt: new Date(),
    })
    .where(eq(user.id, userId))
    .returning();
  return row ?? null;
}

/** Signs the user out everywhere; answers the sessions it ended: each token and its expiry. */
export async function deleteSessions(
  db: Db,
  userId: string,
): Promise<Array<Pick<typeof session.$inferSelect, "token" | "expiresAt">>> {
  return db
    .delete(session)
    .where(eq(session.userId, userId))
    .returning({ token: session.token, expiresAt: session.expiresAt });
}

/** Deletes the user; sessions, accounts, chats and usage go with it by cascade. */
export async function deleteUserRow(db: Db, userId: string): Promise<boolean> {
  const rows = await db.delete(user).where(eq(user.id, userId)).returning({ id: user.id });
  return rows.length > 0;
}
