import { z } from "zod";
import { getLanguageModel, resolveDefaultModelId } from "@/lib/ai/providers";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { compactNow } from "@/lib/chat/compact-now";
import { chatContext } from "@/lib/chat/context";
import { modelIdSchema } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

const body = z.strictObject({ modelId: modelIdSchema.optional() });

/** Compact now: a forced Tier 1; answers the new usage so the ring updates at once. */
export const POST = route<{ id: string }>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const { modelId: asked } = await readJson(request, body, { emptyAs: {} });
  const modelId = asked ?? chat.modelId ?? (await resolveDefaultModelId());
  getLanguageModel(modelId);
  const db = await getDb();
  const { trace, message } = await compactNow(
    { db, resolveModel: getLanguageModel },
    chat,
    modelId,
  );
  // The usage after compacting: from the chat's new state, so the ring drops at once.
  const compacted = await requireChat(user, chat.id);
  return Response.json({ trace, message, context: await chatContext(db, compacted, modelId) });
});
