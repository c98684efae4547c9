import { requireUser } from "@/lib/auth/guards";
import { chatPageQuery, createChatBody, DEFAULT_CHAT_TITLE } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { createChat, listChatPage, newestUnusedChat } from "@/lib/db/queries/chats";
import { AppError } from "@/lib/errors";
import { readJson, readQuery, route } from "@/lib/http/route";
import { assertModelAllowed } from "@/lib/limits/model-access";
import { consumeRateLimit } from "@/lib/limits/rate-limit";

export const dynamic = "force-dynamic";

export const GET = route(async (request) => {
  const user = await requireUser(request);
  const page = await listChatPage(await getDb(), user.id, readQuery(request, chatPageQuery));
  if (!page) throw new AppError("bad_request:query", "before is not one of your chats.");
  return Response.json(page);
});

export const POST = route(async (request) => {
  const user = await requireUser(request);
  const body = await readJson(request, createChatBody);
  const db = await getDb();
  if (body.reuseUnused && body.title === undefined && body.modelId === undefined) {
    const unused = await newestUnusedChat(db, user.id);
    if (unused) return Response.json({ chat: unused }, { status: 200 });
  }
  if (body.modelId !== undefined) await assertModelAllowed(db, body.modelId);
  const point = await consumeRateLimit("chat", user.id);
  const chat = await createChat(db, {
    userId: user.id,
    title: body.title ?? DEFAULT_CHAT_TITLE,
    titled: body.title !== undefined,
    modelId: body.modelId,
  }).catch(async (error: unknown) => {
    // Not created (the database failed): the point goes back, as for a request that never came.
    await point.refund();
    throw error;
  });
  return Response.json({ chat }, { status: 201 });
});
