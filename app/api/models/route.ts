import { defaultModelId } from "@/lib/ai/providers";
import { requireUser } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { route } from "@/lib/http/route";
import { allowedModels } from "@/lib/limits/model-access";

export const dynamic = "force-dynamic";

/** The models the user may pick: those the allow-list lets through. */
export const GET = route(async (request) => {
  await requireUser(request);
  const models = await allowedModels(await getDb(), { signal: request.signal });
  return Response.json({ models, defaultModelId: defaultModelId(models) });
});
