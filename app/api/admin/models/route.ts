import { asc } from "drizzle-orm";
import { requireAdmin } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { modelOverride } from "@/lib/db/schema";
import { route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

/** Admin only: the saved model-window overrides. */
export const GET = route(async (request) => {
  await requireAdmin(request);
  const db = await getDb();
  const overrides = await db
    .select()
    .from(modelOverride)
    .orderBy(asc(modelOverride.provider), asc(modelOverride.model));
  return Response.json({ overrides });
});
