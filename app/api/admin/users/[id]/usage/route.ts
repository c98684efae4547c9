import { z } from "zod";
import { resetUsage } from "@/lib/admin/users";
import { requireAdmin } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

/** Admin only: resets the user's usage of today, so their quota starts over. */
export const DELETE = route<{ id: string }>(async (request, { params }) => {
  await requireAdmin(request);
  await readJson(request, z.strictObject({}), { emptyAs: {} });
  const user = await resetUsage(await getDb(), (await params).id);
  return Response.json({ user });
});
