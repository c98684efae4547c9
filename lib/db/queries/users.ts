import { and, asc, count, eq, sql } from "drizzle-orm";
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

export async function listUsers(db: Db): Promise<User[]> {
  return db.select().from(user).orderBy(asc(user.createdAt), asc(user.email));
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

/** Signs the user out everywhere. */
export async function deleteSessions(db: Db, userId: string): Promise<void> {
  await db.delete(session).where(eq(session.userId, userId));
}

/** Deletes the user; sessions, accounts, chats and usage go with it by cascade. */
export async function deleteUserRow(db: Db, userId: string): Promise<boolean> {
  const rows = await db.delete(user).where(eq(user.id, userId)).returning({ id: user.id });
  return rows.length > 0;
}
