import type { HeldLease } from "@/lib/chat/lease";
import type { Db } from "@/lib/db/client";
import type { TurnStart } from "@/lib/db/queries/leases";
import type { Chat } from "@/lib/db/schema";
import { env } from "@/lib/env";
import { defaultAllowedModelId } from "@/lib/limits/model-access";
import type { QuotaTicket } from "@/lib/limits/quota";
import type { RatePoint } from "@/lib/limits/rate-limit";
import { assertTurnAllowed } from "@/lib/limits/turn-admission";
import { takeChatForTurn } from "./lease";
import type { TurnRequest } from "./request";

export type AdmittedTurn = {
  chat: Chat;
  lease: HeldLease;
  modelId: string;
  quota: QuotaTicket;
  /** The turn's rate point: given back for a request answered as if it never came. */
  ratePoint: RatePoint;
  /** A new message's first reads, taken with the lease (takeChatForTurn). */
  start?: TurnStart;
};

/** A new message's turn reads its history in the statement that takes the chat's lease. */
function firstReads(request: TurnRequest) {
  return request.trigger === "submit-message"
    ? {
        messageId: request.message.id,
        whole: !env().compaction.enabled,
        throughId: request.throughId,
      }
    : undefined;
}

/**
 * Step 1 of a turn: the user's chat with its lease, and the turn's admission (rate, model,
 * quota). A request that names its model asks for both at once — one round trip instead of
 * two; whichever part refuses undoes the other, and the chat's refusal (404, 409) is the
 * answer when both refuse. Without a model named, the chat says which model to admit.
 */
export async function admitTurn(
  db: Db,
  user: { id: string },
  request: TurnRequest,
): Promise<AdmittedTurn> {
  if (!request.modelId) {
    const { chat, lease, start } = await takeChatForTurn(
      db,
      user.id,
      request.chatId,
      firstReads(request),
    );
    try {
      const modelId = chat.modelId ?? (await defaultAllowedModelId(db));
      return {
        chat,
        lease,
        start,
        modelId,
        ...(await assertTurnAllowed(db, user, modelId, request.chatId)),
      };
    } catch (error) {
      await lease.release();
      throw error;
    }
  }
  const modelId = request.modelId;
  const [taken, admitted] = await Promise.allSettled([
    takeChatForTurn(db, user.id, request.chatId, firstReads(request)),
    assertTurnAllowed(db, user, modelId, request.chatId),
  ]);
  if (taken.status === "fulfilled" && admitted.status === "fulfilled") {
    return { ...taken.value, modelId, ...admitted.value };
  }
  // A turn its chat refused gives back what its admission took: the day's message, its held
  // tokens and the rate point (an admission that refused as well keeps its point, as it does on its own).
  await Promise.all([
    taken.status === "fulfilled" ? taken.value.lease.release() : null,
    admitted.status === "fulfilled" ? admitted.value.quota.withdraw() : null,
    admitted.status === "fulfilled" ? admitted.value.ratePoint.refund() : null,
  ]);
  throw taken.status === "rejected" ? taken.reason : (admitted as PromiseRejectedResult).reason;
}
