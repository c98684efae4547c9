import { getLanguageModel } from "@/lib/ai/providers";
import { requireUser } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";
import { meteredResolver } from "@/lib/limits/metering";
import { tokenRecorder } from "@/lib/limits/turn-admission";
import { admitTurn } from "@/lib/turn/admit";
import { TURN_REQUEST_MAX_BYTES, turnRequestSchema } from "@/lib/turn/request";
import { runTurn } from "@/lib/turn/run-turn";

export const dynamic = "force-dynamic";

/** One chat turn, streamed as a UI message stream. */
export const POST = route(async (request) => {
  const user = await requireUser(request);
  const body = await readJson(request, turnRequestSchema, TURN_REQUEST_MAX_BYTES);
  const db = await getDb();
  const { chat, lease, modelId, quota } = await admitTurn(db, user, body);
  try {
    return await runTurn(
      {
        db,
        resolveModel: meteredResolver(getLanguageModel, tokenRecorder(db, user.id)),
        defaultModelId: async () => modelId,
        giveBack: quota.giveBack,
      },
      chat,
      body,
      lease,
    );
  } catch (error) {
    // The turn never started (a message it could not apply): its message is not spent, and
    // the chat is free for the next one.
    try {
      await quota.giveBack();
    } finally {
      await lease.release();
    }
    throw error;
  }
});
