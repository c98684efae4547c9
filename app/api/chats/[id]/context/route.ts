import { z } from "zod";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { chatContext } from "@/lib/chat/context";
import { modelIdSchema } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { readQuery, route } from "@/lib/http/route";
import { assertModelAllowed, defaultAllowedModelId } from "@/lib/limits/model-access";

export const dynamic = "force-dynamic";

const query = z.strictObject({ modelId: modelIdSchema.optional() });

/** How full the chat's context is for a model (`?modelId=`, default the chat's own). */
export const GET = route<{ id: string }>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const { modelId: asked } = readQuery(request, query);
  const db = await getDb();
  // The model is checked as a turn would check it, the chat's saved one too (an admin may have
  // taken it off the list since): its window is looked up at its provider, which must not be
  // asked about ids it does not list.
  const modelId = asked ?? chat.modelId ?? (await defaultAllowedModelId(db));
  await assertModelAllowed(db, modelId);
  return Response.json(await chatContext(db, chat, modelId));
});
