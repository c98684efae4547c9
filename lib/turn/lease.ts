import { statusError } from "@/lib/auth/account-status";
import { chatNotFound } from "@/lib/auth/guards";
import { type HeldLease, holdLease, keepRenewing, LEASE_MS } from "@/lib/chat/lease";
import type { Db } from "@/lib/db/client";
import { findChatForUser } from "@/lib/db/queries/chats";
import {
  acquireTurnLeaseOnOwnChat,
  acquireTurnLeaseWithHistory,
  type TurnStart,
} from "@/lib/db/queries/leases";
import { findUser } from "@/lib/db/queries/users";
import type { Chat } from "@/lib/db/schema";

/** The lease is held by a turn, a Compact now, a summary being saved or a version switch. */
const BUSY_MESSAGE =
  "This chat is busy: a reply or a compaction is running in it. Try again once it is done.";

/** Step 1 of a turn: the chat's lease, or 409 when another turn is still writing. */
export function holdTurnLease(db: Db, chatId: string): Promise<HeldLease> {
  return holdLease(db, chatId, BUSY_MESSAGE);
}

/**
 * The user's chat and its turn lease, in one statement when the chat is free (the usual case);
 * with `read` (a new message's turn), what that turn reads first comes in the same statement.
 * 404 when the chat is not theirs; when another turn holds it, waits as `holdTurnLease` does
 * (then 409) and reads the chat again, as that turn may have moved it on (then no `start`: the
 * turn reads its history itself).
 */
export async function takeChatForTurn(
  db: Db,
  userId: string,
  chatId: string,
  read?: { messageId: string; whole: boolean; throughId?: string },
): Promise<{ chat: Chat; lease: HeldLease; start?: TurnStart }> {
  const taken = read
    ? await acquireTurnLeaseWithHistory(db, userId, chatId, LEASE_MS, read)
    : await acquireTurnLeaseOnOwnChat(db, userId, chatId, LEASE_MS);
  if (taken) return { ...taken, lease: keepRenewing(db, taken.lease) };
  if (!(await findChatForUser(db, userId, chatId))) throw chatNotFound();
  const lease = await holdTurnLease(db, chatId);
  try {
    // Read again after the wait: the account too, which an admin may have disabled meanwhile
    // (their stop went to the turn that held the chat then, not to this one). holdLease reads
    // it only after a wait of its own; this turn waited from its first try.
    const [chat, owner] = await Promise.all([
      findChatForUser(db, userId, chatId),
      findUser(db, userId),
    ]);
    const refused = !chat || !owner ? chatNotFound() : statusError(owner.status);
    if (!chat || refused) throw refused ?? chatNotFound();
    return { chat, lease };
  } catch (error) {
    // Refused, or the read failed: nobody else holds this lease to free it, and its renewal
    // would keep the chat busy for as long as the process runs.
    await lease.release();
    throw error;
  }
}
