import { getLanguageModel } from "@/lib/ai/providers";
import { requireUserFor } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";
import { meteredResolver } from "@/lib/limits/metering";
import { tokenRecorder } from "@/lib/limits/turn-admission";
import { type AdmittedTurn, admitTurn } from "@/lib/turn/admit";
import { TURN_REQUEST_MAX_BYTES, type TurnRequest, turnRequestSchema } from "@/lib/turn/request";
import { runTurn } from "@/lib/turn/run-turn";

export const dynamic = "force-dynamic";

/** A turn's message and held tokens go back to the day and its chat is free again: it never started. */
async function withdraw({ quota, lease }: AdmittedTurn): Promise<void> {
  try {
    await quota.withdraw();
  } finally {
    await lease.release();
  }
}

/** One chat turn, streamed as a UI message stream. */
export const POST = route(async (request) => {
  const db = await getDb();
  // Read once: the admission may run again for the user as they are now (requireUserFor).
  let body: Promise<TurnRequest> | undefined;
  const { user, done } = await requireUserFor(
    request,
    async (user) => {
      body ??= readJson(request, turnRequestSchema, TURN_REQUEST_MAX_BYTES);
      const turn = await body;
      return { turn, admitted: await admitTurn(db, user, turn) };
    },
    // Answered as if it never came: its rate point goes back too.
    async ({ admitted }) => {
      try {
        await withdraw(admitted);
      } finally {
        await admitted.ratePoint.refund();
      }
    },
  );
  const { turn, admitted } = done;
  const recorder = tokenRecorder(db, user.id);
  try {
    const answered = await runTurn(
      {
        db,
        resolveModel: meteredResolver(getLanguageModel, recorder),
        defaultModelId: async () => admitted.modelId,
        giveBack: admitted.quota.giveBack,
        // Once the turn's real tokens are on the day (a turn sent right after sees them, not
        // a day without its hold or its usage); usage that never got there keeps the hold in
        // its place, over rather than under the quota.
        releaseHeldTokens: async () => {
          await recorder.settled();
          if (recorder.lost() > 0) return;
          await admitted.quota.release();
        },
        // Asked once the calls so far are on the day: a step's own tokens count before the next.
        tokensLeft: async () => {
          await recorder.settled();
          return admitted.quota.tokensLeft();
        },
      },
      admitted.chat,
      turn,
      admitted.lease,
      admitted.start,
    );
    // Refused after all (its message could not be stored): the turn gave back what it took
    // but its rate point.
    if (!answered.ok) await admitted.ratePoint.refund();
    return answered;
  } catch (error) {
    // The turn never started (a message it could not apply): its message and its rate point
    // are not spent, and the chat is free for the next one.
    try {
      await withdraw(admitted);
    } finally {
      await admitted.ratePoint.refund();
    }
    throw error;
  }
});
