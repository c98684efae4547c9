import { userListQuery } from "@/lib/admin/user-input";
import { listAdminUsers } from "@/lib/admin/users";
import { requireAdmin } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { readQuery, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

/**
 * Admin only: a page of accounts (waiting ones first), each with its status, role, limits and
 * today's usage; the defaults; how many accounts match; and `next`, the page after it.
 */
export const GET = route(async (request) => {
  await requireAdmin(request);
  const query = readQuery(request, userListQuery);
  return Response.json(await listAdminUsers(await getDb(), query));
});
