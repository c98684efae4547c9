import { defaultModelId, listModels } from "@/lib/ai/providers";
import { requireUser } from "@/lib/auth/guards";
import { route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

export const GET = route(async (request) => {
  await requireUser(request);
  const models = await listModels({ signal: request.signal });
  return Response.json({ models, defaultModelId: defaultModelId(models) });
});
