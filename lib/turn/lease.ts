import { type HeldLease, holdLease } from "@/lib/chat/lease";
import type { Db } from "@/lib/db/client";

/** Step 1 of a turn: the chat's lease, or 409 when another turn is still writing. */
export function holdTurnLease(db: Db, chatId: string): Promise<HeldLease> {
  return holdLease(
    db,
    chatId,
    "A reply is already being written in this chat. Wait for it to finish.",
  );
}
