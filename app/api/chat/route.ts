import { getLanguageModel } from "@/lib/ai/providers";
import { requireUser } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";
import { meteredResolver } from "@/lib/limits/metering";
import { defaultAllowedModelId } from "@/lib/limits/model-access";
import { assertTurnAllowed, tokenRecorder } from "@/lib/limits/turn-admission";
import { takeChatForTurn } from "@/lib/turn/lease";
import { TURN_REQUEST_MAX_BYTES, turnRequestSchema } from "@/lib/turn/request";
import { runTurn } from "@/lib/turn/run-turn";

export const dynamic = "force-dynamic";

/** One chat turn, streamed as a UI message stream. */
export const POST = route(async (request) => {
  const user = await requireUser(request);
  const body = await readJson(request, turnRequestSchema, TURN_REQUEST_MAX_BYTES);
  const db = await getDb();
  // The chat and its lease in one statement; a turn that is refused below frees it again.
  const { chat, lease } = await takeChatForTurn(db, user.id, body.chatId);
  try {
    const modelId = body.modelId ?? chat.modelId ?? (await defaultAllowedModelId(db));
    const quota = await assertTurnAllowed(db, user, modelId);
    try {
      return await runTurn(
        {
          db,
          resolveModel: meteredResolver(getLanguageModel, tokenRecorder(db, user.id)),
          defaultModelId: async () => modelId,
        },
        chat,
        body,
        lease,
      );
    } catch (error) {
      // The turn never started (a message it could not apply): its message is not spent.
      await quota.giveBack();
      throw error;
    }
  } catch (error) {
    await lease.release();
    throw error;
  }
});
