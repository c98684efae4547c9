import { forgetObservedWindow } from "@/lib/admin/models";
import { modelRefInput } from "@/lib/admin/override-input";
import { requireAdmin } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

/** Admin only: forgets the window a silent cut revealed, so the server is asked again. */
export const DELETE = route(async (request) => {
  await requireAdmin(request);
  const { provider, model } = await readJson(request, modelRefInput);
  return Response.json({ model: await forgetObservedWindow(await getDb(), provider, model) });
});
