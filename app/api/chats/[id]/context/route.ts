import { z } from "zod";
import { resolveDefaultModelId } from "@/lib/ai/providers";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { chatContext } from "@/lib/chat/context";
import { modelIdSchema } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { readQuery, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

const query = z.object({ modelId: modelIdSchema.optional() });

/** How full the chat's context is for a model (`?modelId=`, default the chat's own). */
export const GET = route<{ id: string }>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const { modelId: asked } = readQuery(request, query);
  const modelId = asked ?? chat.modelId ?? (await resolveDefaultModelId());
  return Response.json(await chatContext(await getDb(), chat, modelId));
});
