import { z } from "zod";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { missingCursorError } from "@/lib/chat/branches";
import { messagePageQuery, updateChatBody } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { deleteChat, isCompacting, isReplying, updateChat } from "@/lib/db/queries/chats";
import { loadMessagePage } from "@/lib/db/queries/messages";
import { AppError, chatDeleted } from "@/lib/errors";
import { readJson, readQuery, route } from "@/lib/http/route";
import { assertModelAllowed } from "@/lib/limits/model-access";
import { liveBus } from "@/lib/live/bus";
import { requestStopOfAnyTurn } from "@/lib/live/stop";
import { log } from "@/lib/log";

export const dynamic = "force-dynamic";

type Params = { id: string };

export const GET = route<Params>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const db = await getDb();
  const query = readQuery(request, messagePageQuery);
  const page = await loadMessagePage(db, chat.id, query);
  if (!page) {
    // The cursor may be gone with its chat, deleted since it was read: that is the chat's 404.
    await requireChat(user, chat.id);
    throw await missingCursorError(db, chat.id, query.before);
  }
  const { id, title, modelId, createdAt, updatedAt } = chat;
  return Response.json({
    chat: { id, title, modelId, createdAt, updatedAt },
    // The lease was read before the history, and a turn stores its reply before freeing the
    // lease: false here means the history above is complete.
    replying: isReplying(chat),
    // The newest page (or the page before `before`), oldest first; `hasMore`: older ones remain.
    hasMore: page.hasMore,
    messages: page.messages.map(({ id, role, parts, metadata, createdAt }) => ({
      id,
      role,
      parts,
      metadata,
      createdAt,
    })),
  });
});

export const PATCH = route<Params>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const body = await readJson(request, updateChatBody);
  const db = await getDb();
  if (body.modelId !== undefined) await assertModelAllowed(db, body.modelId);
  const { pickedAt, ...patch } = body;
  const updated = await updateChat(db, chat.id, {
    ...patch,
    ...(pickedAt === undefined ? {} : { pickedAt: new Date(pickedAt) }),
  });
  if (!updated) throw chatDeleted();
  if (updated === "superseded") {
    throw new AppError(
      "conflict:model_pick",
      "A later pick of this chat's model was saved before this one, so the chat keeps it.",
    );
  }
  return Response.json({ chat: updated });
});

/**
 * Deletes the chat and all it holds. A reply still being written, or a compaction summarizing
 * in the background, is stopped once the chat is gone, so its model call does not run on (and
 * charge) for a chat nobody has: a reply's stream ends
 * as stopped and nothing of it is stored (the database refuses a message for a missing chat);
 * requests waiting for the chat's lease then answer 404. A delete that fails stops nothing: the
 * chat stays, and so does its reply.
 */
export const DELETE = route<Params>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  await readJson(request, z.strictObject({}), { emptyAs: {} });
  // Whether a reply runs, as the delete found the chat: a turn may have taken it since it was read.
  const deleted = await deleteChat(await getDb(), chat.id);
  if (deleted && (isReplying(deleted) || isCompacting(deleted))) {
    // Left pending as well, for a turn not listening yet: no later turn has this chat's id.
    await requestStopOfAnyTurn(liveBus(), chat.id).catch((error: unknown) =>
      log.warn({ err: error, chatId: chat.id }, "delete: the running reply could not be stopped"),
    );
  }
  return new Response(null, { status: 204 });
});
