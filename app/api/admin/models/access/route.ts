import { describeModelAccess, saveModelAccess } from "@/lib/admin/model-access";
import { modelAccessInput } from "@/lib/admin/model-access-input";
import { requireAdmin } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

/** Admin only: which providers are restricted to an allow-list, and the models it allows. */
export const GET = route(async (request) => {
  await requireAdmin(request);
  return Response.json({ access: await describeModelAccess(await getDb()) });
});

export const PUT = route(async (request) => {
  const admin = await requireAdmin(request);
  const input = await readJson(request, modelAccessInput);
  return Response.json({ access: await saveModelAccess(await getDb(), input, admin.id) });
});
