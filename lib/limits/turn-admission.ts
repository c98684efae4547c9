/**
 * What a turn must pass before it starts (DESIGN §16): the user's turn rate, a model the
 * allow-list lets them use, and room in today's quota. Called by POST /api/chat before the
 * turn pipeline runs, so a refused turn changes nothing.
 */
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import type { TokenSink } from "./metering";
import { assertModelListed, modelNotAllowed } from "./model-access";
import { type QuotaTicket, recordTokens, takeTurnQuota } from "./quota";
import { consumeRateLimit, type RatePoint } from "./rate-limit";

/**
 * 429 when the user sends turns too fast or today's quota is used up (saying when it resets),
 * 400 when the model is unknown or not allowed. Takes one message from the quota and one point
 * of the turn rate: give them back if the turn then does not start (the rate point only for a
 * request answered as if it never came).
 */
export async function assertTurnAllowed(
  db: Db,
  user: { id: string },
  modelId: string,
  /** The chat the turn is for (a refusal tells turns running in other chats apart). */
  chatId?: string,
): Promise<{ quota: QuotaTicket; ratePoint: RatePoint }> {
  // The rate and the quota are asked at once, one round trip rather than two; the rate's
  // refusal is the answer, and a message the quota took for a turn it refuses goes back.
  const [rate, quota] = await Promise.allSettled([
    consumeRateLimit("turn", user.id),
    // The allow-list is checked in the statement that takes the message.
    assertModelListed(modelId).then((model) =>
      takeTurnQuota(
        db,
        user.id,
        { ...model, notAllowed: () => modelNotAllowed(modelId) },
        new Date(),
        chatId,
      ),
    ),
  ]);
  if (rate.status === "rejected") {
    if (quota.status === "fulfilled") {
      await quota.value
        .withdraw()
        .catch((error: unknown) =>
          log.warn({ err: error, userId: user.id }, "a rate-refused turn's message not given back"),
        );
    }
    throw rate.reason;
  }
  if (quota.status === "rejected") {
    // Not a refusal (429, 400: the try counts) but a failure (the database dropped the
    // statement, the provider's model list cannot be read: a 503 that says to try again): the
    // request took nothing, its point included.
    const refused = quota.reason instanceof AppError && quota.reason.status < 500;
    if (!refused) await rate.value.refund();
    throw quota.reason;
  }
  return { quota: quota.value, ratePoint: rate.value };
}

/**
 * A sink that also says when the tokens given to it so far are on the day, and how many of them
 * never got there.
 */
export type TokenRecorder = TokenSink & { settled: () => Promise<void>; lost: () => number };

/**
 * How long after a failed write of a provider call's tokens it is tried again (a database that
 * dropped the statement). A write that did commit but whose answer was lost counts twice: over
 * rather than under the quota.
 */
const RECORD_RETRY_MS = [200, 800, 2_500];

/**
 * Adds each provider call's tokens to the user's day; a failed write is tried again, and one
 * that never lands is logged and counted in `lost`, not thrown. `settled` waits for the writes
 * begun so far, retries included: a check of the day's tokens after it sees them.
 */
export function tokenRecorder(db: Db, userId: string): TokenRecorder {
  const pending = new Set<Promise<void>>();
  let lost = 0;
  const writeWithRetries = async (tokens: number) => {
    for (const wait of [...RECORD_RETRY_MS, undefined]) {
      try {
        await recordTokens(db, userId, tokens);
        return;
      } catch (error) {
        if (wait === undefined) {
          lost += tokens;
          log.error({ err: error, userId, tokens }, "token usage not recorded");
          return;
        }
        log.warn({ err: error, userId }, "recording token usage failed; trying again");
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  };
  const record = (tokens: number) => {
    const write = writeWithRetries(tokens).finally(() => pending.delete(write));
    pending.add(write);
  };
  return Object.assign(record, {
    settled: async () => {
      await Promise.all(pending);
    },
    lost: () => lost,
  });
}
