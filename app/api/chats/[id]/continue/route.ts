import { z } from "zod";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { continueInNewChat } from "@/lib/chat/memory";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

/** Continue in a new chat: its context begins with this chat's summary and ledger. */
export const POST = route<{ id: string }>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  await readJson(request, z.strictObject({}), { emptyAs: {} });
  const created = await continueInNewChat(await getDb(), user.id, chat);
  return Response.json({ chat: created }, { status: 201 });
});
