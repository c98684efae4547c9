import type { Db } from "@/lib/db/client";
import { getChat } from "@/lib/db/queries/chats";
import { acquireLease, type Lease, releaseLease, renewLease } from "@/lib/db/queries/leases";
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
   * Aborts when a renewal finds the lease no longer this holder's: it ran out (the process
   * stalled past LEASE_MS) and another turn or compaction took the chat. The work under it
   * should stop; whatever it writes next may land beside the new holder's.
   */
  lost: AbortSignal;
};

/**
 * Takes the chat's lease for a turn or a compaction and keeps renewing it
 * (with the holder's token) until released. When another holder has it, waits
 * briefly — a reply that just finished is being stored — then answers 409.
 */
export async function holdLease(
  db: Db,
  chatId: string,
  conflictMessage: string,
  now: () => number = Date.now,
): Promise<HeldLease> {
  let lease = await acquireLease(db, chatId, LEASE_MS);
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
  return keepRenewing(db, lease);
}

/**
 * The chat's background-compaction lease, taken at once or not at all: null when another
 * instance is compacting the chat (nobody waits for a background job). Renewed like a turn's.
 */
export async function tryHoldCompactionLease(db: Db, chatId: string): Promise<HeldLease | null> {
  const lease = await acquireLease(db, chatId, LEASE_MS, "compaction");
  return lease ? keepRenewing(db, lease) : null;
}

/** A lease just taken, held: renewed until released. */
export function keepRenewing(db: Db, lease: Lease): HeldLease {
  const { chatId } = lease;
  let held: Lease | null = lease;
  // A renewal on its way: the release waits for it, or it would free the old token while the
  // renewal writes a new one that nobody frees (the chat stays busy until that runs out).
  let renewing: Promise<void> | null = null;
  const lost = new AbortController();
  const renew = setInterval(() => {
    if (!held || renewing) return;
    renewing = renewLease(db, held, LEASE_MS)
      .then((next) => {
        if (!next) {
          log.warn({ chatId }, "lease lost before it was renewed");
          clearInterval(renew);
          lost.abort(new Error("the chat's lease was lost"));
        }
        held = next;
      })
      .catch((error) => log.warn({ err: error, chatId }, "lease renew failed"))
      .finally(() => {
        renewing = null;
      });
  }, LEASE_RENEW_MS);
  let released = false;
  return {
    lost: lost.signal,
    release: async () => {
      if (released) return;
      released = true;
      clearInterval(renew);
      await renewing;
      const current = held;
      held = null;
      if (!current) return;
      await releaseLease(db, current).catch((error) =>
        log.error({ err: error, chatId }, "lease release failed"),
      );
    },
  };
}
