import { quotaDefaultsInput, quotaDefaultsPatchInput } from "@/lib/admin/user-input";
import { requireAdmin } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { getQuotaDefaults, saveQuotaDefaults } from "@/lib/db/queries/quota-defaults";
import { readJson, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

/** Admin only: the daily limits every user has unless their own override says otherwise. */
export const GET = route(async (request) => {
  await requireAdmin(request);
  return Response.json({ defaults: await getQuotaDefaults(await getDb()) });
});

export const PUT = route(async (request) => {
  const admin = await requireAdmin(request);
  const input = await readJson(request, quotaDefaultsInput);
  return Response.json({ defaults: await saveQuotaDefaults(await getDb(), input, admin.id) });
});

/** Changes only the limits sent (Admin → Users' form sends the ones the admin edited). */
export const PATCH = route(async (request) => {
  const admin = await requireAdmin(request);
  const input = await readJson(request, quotaDefaultsPatchInput);
  return Response.json({ defaults: await saveQuotaDefaults(await getDb(), input, admin.id) });
});
