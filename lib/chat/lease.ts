import { statusError } from "@/lib/auth/account-status";
import type { Db } from "@/lib/db/client";
import { getChat } from "@/lib/db/queries/chats";
import { acquireLease, type Lease, releaseLease, renewLease } from "@/lib/db/queries/leases";
import { statusOf } from "@/lib/db/queries/users";
import { AppError, chatDeleted } from "@/lib/errors";
import { log } from "@/lib/log";

/** Short, so a crashed instance frees the chat within this long. */
export const LEASE_MS = 30_000;
/** Renewed well inside the lease, so one slow renewal never loses it. */
const LEASE_RENEW_MS = 10_000;
/** A turn that is storing its reply frees the chat within moments: wait this long before a 409. */
const LEASE_WAIT_MS = 5_000;
const LEASE_POLL_MS = 50;

export type HeldLease = {
  release: () => Promise<void>;
  /**
   * Aborts when a renewal finds the lease no longer this holder's (it ran out: the process
   * stalled past LEASE_MS, and another turn or compaction took the chat), or when renewals
   * failed or went unanswered until it is about to run out. The work under it should stop;
   * whatever it writes next may land beside another holder's.
   */
  lost: AbortSignal;
  /**
   * Runs `write` with the token now on the row, no renewal changing it meanwhile (one on its
   * way is waited for first, as a release waits). Null, running nothing, once the lease is lost
   * or released. `write` must still check the token in its statement: a lease that ran out
   * unnoticed (the process stalled past its term) may be another holder's by now.
   */
  asHolder: <T>(write: (lease: Lease) => Promise<T>) => Promise<T | null>;
};

/**
 * Takes the chat's lease for a turn or a compaction and keeps renewing it
 * (with the holder's token) until released. When another holder has it, waits
 * briefly — a reply that just finished is being stored — then answers 409. After
 * such a wait the chat's owner is read again: an admin who disabled the account
 * meanwhile stopped what held the chat then, not this write, which is refused (403).
 */
export async function holdLease(
  db: Db,
  chatId: string,
  conflictMessage: string,
  now: () => number = Date.now,
): Promise<HeldLease> {
  let lease = await acquireLease(db, chatId, LEASE_MS);
  const waited = lease === null;
  // No lease for a chat that is gone (deleted a moment ago): nothing to wait for.
  if (!lease && !(await getChat(db, chatId))) throw chatDeleted();
  const deadline = now() + LEASE_WAIT_MS;
  while (!lease && now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
    lease = await acquireLease(db, chatId, LEASE_MS);
  }
  if (!lease) {
    if (!(await getChat(db, chatId))) throw chatDeleted();
    throw new AppError("conflict:turn", conflictMessage);
  }
  const held = keepRenewing(db, lease);
  if (!waited) return held;
  try {
    await refuseLockedOwner(db, chatId);
    return held;
  } catch (error) {
    // Nobody else holds this lease to free it.
    await held.release();
    throw error;
  }
}

/** Throws when the chat is gone, or its owner may no longer use Fold (disabled). */
async function refuseLockedOwner(db: Db, chatId: string): Promise<void> {
  const chat = await getChat(db, chatId);
  const status = chat ? await statusOf(db, chat.userId) : null;
  const refused = status === null ? chatDeleted() : statusError(status);
  if (refused) throw refused;
}

/**
 * The chat's background-compaction lease, taken at once or not at all: null when another
 * instance is compacting the chat (nobody waits for a background job). Renewed like a turn's.
 */
export async function tryHoldCompactionLease(db: Db, chatId: string): Promise<HeldLease | null> {
  const lease = await acquireLease(db, chatId, LEASE_MS, "compaction");
  return lease ? keepRenewing(db, lease) : null;
}

/**
 * How long a release, or a write as the holder, waits for a renewal on its way. One that never
 * answers (a dead database connection) must not hold the turn's end: the release then frees the
 * token it knows, and a renewal landing later leaves the chat busy until that lease runs out (a
 * write under the token it replaced is refused: the reply is told it was not stored).
 */
const RELEASE_WAITS_FOR_RENEWAL_MS = LEASE_RENEW_MS;

/**
 * A lease just taken, held: renewed until released. Renewals that keep failing or never answer
 * (the database unreachable) lose it once less than one renewal period of it is left: another
 * turn may take the chat when it runs out, so the work under it stops before then rather than
 * write beside that turn's.
 */
export function keepRenewing(db: Db, lease: Lease, now: () => number = Date.now): HeldLease {
  const { chatId } = lease;
  let held: Lease | null = lease;
  // When the lease held runs out at the latest, by this clock: counted from before the statement
  // that set it was sent.
  let expiresAt = now() + LEASE_MS;
  // A renewal on its way: the release waits for it, or it would free the old token while the
  // renewal writes a new one that nobody frees (the chat stays busy until that runs out).
  let renewing: Promise<void> | null = null;
  // A write under the token held: no renewal replaces that token until it is done.
  let writing = false;
  const lost = new AbortController();
  const lose = (why: string) => {
    log.warn({ chatId }, why);
    clearInterval(renew);
    lost.abort(new Error("the chat's lease was lost"));
  };
  const expiring = () => now() + LEASE_RENEW_MS >= expiresAt;
  const renew = setInterval(() => {
    if (!held || lost.signal.aborted || writing) return;
    if (renewing) {
      if (expiring()) lose("lease renewal unanswered as the lease runs out");
      return;
    }
    const sentAt = now();
    renewing = renewLease(db, held, LEASE_MS)
      .then((next) => {
        // Renewed after all (once given up, too): the token a release frees is the new one.
        held = next;
        if (lost.signal.aborted) return;
        if (!next) lose("lease lost before it was renewed");
        else expiresAt = sentAt + LEASE_MS;
      })
      .catch((error) => {
        log.warn({ err: error, chatId }, "lease renew failed");
        if (expiring() && !lost.signal.aborted) lose("lease renewals failed as the lease runs out");
      })
      .finally(() => {
        renewing = null;
      });
  }, LEASE_RENEW_MS);
  const renewalSettled = async () => {
    if (!renewing) return;
    let waited: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      renewing,
      new Promise((resolve) => {
        waited = setTimeout(resolve, RELEASE_WAITS_FOR_RENEWAL_MS);
      }),
    ]);
    clearTimeout(waited);
  };
  let released = false;
  return {
    lost: lost.signal,
    asHolder: async (write) => {
      await renewalSettled();
      if (!held || released || lost.signal.aborted) return null;
      writing = true;
      try {
        return await write(held);
      } finally {
        writing = false;
      }
    },
    release: async () => {
      if (released) return;
      released = true;
      clearInterval(renew);
      await renewalSettled();
      const current = held;
      held = null;
      if (!current) return;
      await releaseLease(db, current).catch((error) =>
        log.error({ err: error, chatId }, "lease release failed"),
      );
    },
  };
}
