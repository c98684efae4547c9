import { z } from "zod";
import { getLanguageModel } from "@/lib/ai/providers";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { compactNow } from "@/lib/chat/compact-now";
import { chatContext } from "@/lib/chat/context";
import { modelIdSchema } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";
import { meteredResolver } from "@/lib/limits/metering";
import { assertModelAllowed, defaultAllowedModelId } from "@/lib/limits/model-access";
import { assertTokensLeft } from "@/lib/limits/quota";
import { consumeRateLimit } from "@/lib/limits/rate-limit";
import { tokenRecorder } from "@/lib/limits/turn-admission";

export const dynamic = "force-dynamic";

const body = z.strictObject({ modelId: modelIdSchema.optional() });

/** Compact now: a forced Tier 1; answers the new usage so the ring updates at once. */
export const POST = route<{ id: string }>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const { modelId: asked } = await readJson(request, body, { emptyAs: {} });
  const db = await getDb();
  const modelId = asked ?? chat.modelId ?? (await defaultAllowedModelId(db));
  await assertModelAllowed(db, modelId);
  // The summarizer is a provider call like a turn's: limited per minute, refused past the token quota.
  const point = await consumeRateLimit("compact", user.id);
  // The summarizer's tokens count towards the user's daily quota like a turn's; a call stopped
  // while the provider read or wrote is counted too.
  const record = tokenRecorder(db, user.id);
  let summarized = false;
  const { trace, message } = await (async () => {
    await assertTokensLeft(db, user.id);
    return compactNow(
      {
        db,
        resolveModel: meteredResolver(getLanguageModel, (tokens) => {
          summarized = true;
          record(tokens);
        }),
      },
      chat,
      modelId,
    );
  })().catch(async (error: unknown) => {
    // Refused or failed before any summarizer ran (the token quota, a reply being written, the
    // chat deleted meanwhile, the database): the point goes back, as for a request that never
    // came. One stopped or failed after the provider was called keeps it spent.
    if (!summarized) await point.refund();
    throw error;
  });
  // The usage after compacting: from the chat's new state, so the ring drops at once.
  const compacted = await requireChat(user, chat.id);
  return Response.json({ trace, message, context: await chatContext(db, compacted, modelId) });
});
