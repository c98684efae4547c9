import { getLanguageModel, resolveDefaultModelId } from "@/lib/ai/providers";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";
import { TURN_REQUEST_MAX_BYTES, turnRequestSchema } from "@/lib/turn/request";
import { runTurn } from "@/lib/turn/run-turn";

export const dynamic = "force-dynamic";

/** One chat turn, streamed as a UI message stream. */
export const POST = route(async (request) => {
  const user = await requireUser(request);
  const body = await readJson(request, turnRequestSchema, TURN_REQUEST_MAX_BYTES);
  const chat = await requireChat(user, body.chatId);
  return runTurn(
    { db: await getDb(), resolveModel: getLanguageModel, defaultModelId: resolveDefaultModelId },
    chat,
    body,
  );
});
