import { listAdminModels, saveOverride } from "@/lib/admin/models";
import { overrideInput } from "@/lib/admin/override-input";
import { requireAdmin } from "@/lib/auth/guards";
import { getDatabase, getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

/** Admin only: every reachable model with its resolved window, override and calibration. */
export const GET = route(async (request) => {
  await requireAdmin(request);
  const models = await listAdminModels(await getDb(), { signal: request.signal });
  return Response.json({ models });
});

/** Admin only: sets a model's override; both numbers null clears it. */
export const PUT = route(async (request) => {
  const admin = await requireAdmin(request);
  const input = await readJson(request, overrideInput);
  const model = await saveOverride(await getDatabase(), input, admin.id);
  return Response.json({ model });
});
