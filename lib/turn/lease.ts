import type { Db } from "@/lib/db/client";
import { acquireTurnLease, releaseTurnLease, renewTurnLease } from "@/lib/db/queries/messages";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";

/** A turn streams for at most this long before its lease needs renewing. */
const TURN_LEASE_MS = 120_000;
const LEASE_RENEW_MS = 30_000;

export type TurnLease = { release: () => Promise<void> };

/**
 * Step 1 of a turn: take the chat's lease ("a turn is streaming", across
 * server instances) and keep renewing it until released. Answers 409 when
 * another turn holds it.
 */
export async function holdTurnLease(db: Db, chatId: string): Promise<TurnLease> {
  if (!(await acquireTurnLease(db, chatId, TURN_LEASE_MS))) {
    throw new AppError(
      "conflict:turn",
      "A reply is already being written in this chat. Wait for it to finish.",
    );
  }
  const renew = setInterval(() => {
    renewTurnLease(db, chatId, TURN_LEASE_MS).catch((error) =>
      log.warn({ err: error, chatId }, "lease renew failed"),
    );
  }, LEASE_RENEW_MS);
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      clearInterval(renew);
      await releaseTurnLease(db, chatId).catch((error) =>
        log.error({ err: error, chatId }, "lease release failed"),
      );
    },
  };
}
