import { z } from "zod";
import { userPatchInput } from "@/lib/admin/user-input";
import { deleteUser, updateUser } from "@/lib/admin/users";
import { requireAdmin } from "@/lib/auth/guards";
import { getDatabase } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

type Params = { id: string };

/** Admin only: approve, disable, promote, demote, or set a user's limits. */
export const PATCH = route<Params>(async (request, { params }) => {
  const admin = await requireAdmin(request);
  const patch = await readJson(request, userPatchInput);
  const user = await updateUser(await getDatabase(), admin.id, (await params).id, patch);
  return Response.json({ user });
});

/** Admin only: deletes an account with its chats. */
export const DELETE = route<Params>(async (request, { params }) => {
  const admin = await requireAdmin(request);
  await readJson(request, z.strictObject({}), { emptyAs: {} });
  await deleteUser(await getDatabase(), admin.id, (await params).id);
  return new Response(null, { status: 204 });
});
