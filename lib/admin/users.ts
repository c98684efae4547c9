/**
 * Admin → Users (DESIGN §16): every account with its status, role, quota and today's usage, and
 * the one writer of those. Role and status changes run under the admin lock and re-check that
 * the acting admin still is one, so two admins demoting each other cannot leave none. Disabling
 * or deleting an account also stops what runs on its chats.
 */
import { sessionTokenHash } from "@/lib/auth/disabled-session";
import type { Database, Db } from "@/lib/db/client";
import { busyChatIdsOf, deleteChatsOf } from "@/lib/db/queries/chats";
import {
  forgetDisabledSessions,
  rememberDisabledSessions,
} from "@/lib/db/queries/disabled-sessions";
import { getQuotaDefaults, type QuotaLimits } from "@/lib/db/queries/quota-defaults";
import { clearUsage, type DayUsage, usageOfUsers, usageOn } from "@/lib/db/queries/usage";
import {
  deleteSessions,
  deleteUserRow,
  findUser,
  listUsers,
  lockAdmins,
  updateUserRow,
} from "@/lib/db/queries/users";
import type { User } from "@/lib/db/schema";
import { AppError } from "@/lib/errors";
import { usageDayOf } from "@/lib/limits/quota-day";
import { liveBus } from "@/lib/live/bus";
import { requestStopOfAnyTurn } from "@/lib/live/stop";
import { log } from "@/lib/log";
import { encodeUserCursor, type UserListQuery, type UserPatchInput } from "./user-input";

/** One row of the admin table, as the users routes answer it. */
export type AdminUser = Pick<User, "id" | "name" | "email" | "role" | "status"> & {
  createdAt: string;
  /** The user's own overrides; null takes the default. */
  limits: QuotaLimits;
  usageToday: DayUsage;
};

/**
 * One page of the admin table: its accounts, the default limits, how many accounts the search
 * matches in all, and the cursor of the next page (null: this is the last).
 */
export type AdminUserList = {
  users: AdminUser[];
  defaults: QuotaLimits;
  total: number;
  next: string | null;
};

const NO_USAGE: DayUsage = { messages: 0, tokens: 0 };

/** A page of the admin table (accounts waiting for approval first, then oldest first). */
export async function listAdminUsers(
  db: Db,
  query: UserListQuery,
  now: Date = new Date(),
): Promise<AdminUserList> {
  const [page, defaults] = await Promise.all([
    listUsers(db, { search: query.q, after: query.after, limit: query.limit }),
    getQuotaDefaults(db),
  ]);
  const usage = await usageOfUsers(
    db,
    page.users.map((u) => u.id),
    usageDayOf(now),
  );
  return {
    users: page.users.map((u) => adminUser(u, usage.get(u.id) ?? NO_USAGE)),
    defaults,
    total: page.total,
    next: page.more && page.last ? encodeUserCursor(page.last) : null,
  };
}

const STATUS_WORDS: Record<User["status"], string> = {
  pending: "waiting for approval",
  active: "active",
  disabled: "disabled",
};

/** Approves, disables, promotes, demotes or sets limits; the actor cannot lock themself out. */
export async function updateUser(
  database: Database,
  actorId: string,
  targetId: string,
  patch: UserPatchInput,
  now: Date = new Date(),
): Promise<AdminUser> {
  const changesAccess = patch.role !== undefined || patch.status !== undefined;
  if (changesAccess && actorId === targetId) {
    throw new AppError(
      "bad_request:self",
      "You cannot change your own role or status: ask another admin.",
    );
  }
  const updated = await database.db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    if (changesAccess) await requireAdminStill(tx, actorId);
    // Under the admin lock (a status change takes it): no other access change comes between.
    if (patch.from !== undefined) {
      const current = await findUser(tx, targetId);
      if (current && current.status !== patch.from) {
        throw new AppError(
          "conflict:user_status",
          `This account is ${STATUS_WORDS[current.status]} now (another admin changed it): nothing was changed.`,
        );
      }
    }
    const { from: _from, ...change } = patch;
    const row = await updateUserRow(tx, targetId, change);
    if (!row) throw new AppError("not_found:user", "User not found.");
    if (patch.status === "disabled") {
      // Signed out at once; each browser is told why when it comes back (disabled-session.ts).
      const ended = await deleteSessions(tx, targetId);
      await rememberDisabledSessions(
        tx,
        targetId,
        ended.map((s) => ({ tokenHash: sessionTokenHash(s.token), expiresAt: s.expiresAt })),
        now,
      );
    } else if (patch.status !== undefined) {
      await forgetDisabledSessions(tx, targetId);
    }
    return row;
  });
  if (patch.status === "disabled") await stopRunningTurnsOf(database.db, targetId);
  return adminUser(updated, await usageOn(database.db, targetId, usageDayOf(now)));
}

/** Deletes an account and everything it owns; never the actor's own. */
export async function deleteUser(database: Database, actorId: string, targetId: string) {
  if (actorId === targetId) {
    throw new AppError("bad_request:self", "You cannot delete your own account.");
  }
  const busy = await database.db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    await requireAdminStill(tx, actorId);
    // The chats go first, saying which were busy: a turn that takes one during the delete is
    // either among them or finds no chat.
    const chatIds = await deleteChatsOf(tx, targetId);
    if (!(await deleteUserRow(tx, targetId))) {
      throw new AppError("not_found:user", "User not found.");
    }
    return chatIds;
  });
  await stopChats(busy);
}

/** Starts the user's day over: today's messages and tokens back to zero. */
export async function resetUsage(db: Db, targetId: string, now: Date = new Date()) {
  const target = await findUser(db, targetId);
  if (!target) throw new AppError("not_found:user", "User not found.");
  await clearUsage(db, targetId, usageDayOf(now));
  return adminUser(target, NO_USAGE);
}

async function requireAdminStill(tx: Db, actorId: string): Promise<void> {
  await lockAdmins(tx);
  const actor = await findUser(tx, actorId);
  if (actor?.role !== "admin" || actor.status !== "active") {
    throw new AppError("forbidden:admin", "Only admins can do this.");
  }
}

/**
 * Stops the turns running on the user's chats. Read after the commit: a turn that took its lease
 * meanwhile is found too, and with the sessions gone no new one starts. The account change has
 * committed: a failed read is logged, not answered with an error.
 */
async function stopRunningTurnsOf(db: Db, userId: string): Promise<void> {
  let chatIds: string[];
  try {
    chatIds = await busyChatIdsOf(db, userId);
  } catch (error) {
    log.warn({ err: error, userId }, "admin: the running replies to stop could not be read");
    return;
  }
  await stopChats(chatIds);
}

/**
 * Stops the turns running on these chats, on whichever instance runs them: a disabled or
 * deleted account's replies, and the compactions summarizing in the background, must not go on
 * (and charge) after the admin's word. A turn admitted but not yet
 * listening finds the stop when it starts to. The account change has committed: a bus that
 * fails is logged, not answered with an error.
 */
async function stopChats(chatIds: string[]): Promise<void> {
  if (chatIds.length === 0) return;
  const bus = liveBus();
  await Promise.all(
    chatIds.map((chatId) =>
      requestStopOfAnyTurn(bus, chatId).catch((error: unknown) =>
        log.warn({ err: error, chatId }, "admin: a running reply could not be stopped"),
      ),
    ),
  );
}

function adminUser(row: User, usageToday: DayUsage): AdminUser {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    role: row.role,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    limits: { dailyTokenLimit: row.dailyTokenLimit, dailyMessageLimit: row.dailyMessageLimit },
    usageToday,
  };
}
