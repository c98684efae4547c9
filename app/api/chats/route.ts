import { requireUser } from "@/lib/auth/guards";
import { createChatBody, DEFAULT_CHAT_TITLE } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { createChat, listChats } from "@/lib/db/queries/chats";
import { readJson, route } from "@/lib/http/route";
import { assertModelAllowed } from "@/lib/limits/model-access";

export const dynamic = "force-dynamic";

export const GET = route(async (request) => {
  const user = await requireUser(request);
  return Response.json({ chats: await listChats(await getDb(), user.id) });
});

export const POST = route(async (request) => {
  const user = await requireUser(request);
  const body = await readJson(request, createChatBody);
  const db = await getDb();
  if (body.modelId !== undefined) await assertModelAllowed(db, body.modelId);
  const chat = await createChat(db, {
    userId: user.id,
    title: body.title ?? DEFAULT_CHAT_TITLE,
    modelId: body.modelId,
  });
  return Response.json({ chat }, { status: 201 });
});
