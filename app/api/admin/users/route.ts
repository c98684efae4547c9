import { listAdminUsers } from "@/lib/admin/users";
import { requireAdmin } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

/** Admin only: every account, its status, role, limits and today's usage, and the defaults. */
export const GET = route(async (request) => {
  await requireAdmin(request);
  return Response.json(await listAdminUsers(await getDb()));
});
