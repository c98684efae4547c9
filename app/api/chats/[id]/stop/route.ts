import { z } from "zod";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { attemptIdSchema } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { getChat, isReplying } from "@/lib/db/queries/chats";
import { findMessage } from "@/lib/db/queries/messages";
import type { Chat } from "@/lib/db/schema";
import { isDatabaseUnavailable } from "@/lib/db/unavailable";
import { AppError } from "@/lib/errors";
import { readJson, route } from "@/lib/http/route";
import { liveBus } from "@/lib/live/bus";
import { requestStop, requestStopOf } from "@/lib/live/stop";

export const dynamic = "force-dynamic";

const stopInput = z
  .strictObject({
    /** The user message the reply to stop answers: it is stopped even if it has not begun yet. */
    messageId: z.string().min(1).max(100).optional(),
    /** The page's request that asked for that reply: only its turn is stopped. */
    attemptId: attemptIdSchema.optional(),
  })
  .refine((input) => input.attemptId === undefined || input.messageId !== undefined, {
    message: "attemptId names an attempt at a message: send messageId with it",
  });

/**
 * Stop the chat's running reply, wherever it runs: the turn aborts its model
 * call and stores what was written, marked as stopped. Naming the message the
 * reply answers also stops a turn that has not begun, or not begun listening,
 * yet. Answers whether a reply was running or about to.
 */
export const POST = route<{ id: string }>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const { messageId, attemptId } = await readJson(request, stopInput, { emptyAs: {} });
  const stopping = await (messageId
    ? requestStopOf(liveBus(), chat.id, { messageId, attemptId }, () =>
        turnEnded(chat.id, messageId),
      )
    : stopRunning(chat)
  ).catch((error: unknown) => {
    if (error instanceof AppError || isDatabaseUnavailable(error)) throw error;
    throw new AppError(
      "unavailable:live",
      "Stop cannot reach the reply right now: the channel between Fold's servers (Redis) is unavailable.",
      { cause: error },
    );
  });
  return stopping
    ? Response.json({ stopping: true }, { status: 202 })
    : Response.json({ stopping: false });
});

/**
 * The message is stored and no turn holds the chat: the turn that answered it, or failed to, has
 * ended. A stop naming no attempt (a page that follows a reply it did not send) is then too late;
 * left pending, it would stop the next Retry of the message. A message not stored yet is still
 * on its way: its turn will find the stop.
 */
async function turnEnded(chatId: string, messageId: string): Promise<boolean> {
  const db = await getDb();
  const [stored, current] = await Promise.all([
    findMessage(db, chatId, messageId),
    getChat(db, chatId),
  ]);
  return stored !== null && !(current && isReplying(current));
}

/**
 * Without a message named: only a reply that runs and listens now can be stopped (a turn listens
 * beside its model call, moments after it begins; the page names the message). The chat's lease
 * alone says nothing (a turn not listening yet, a Compact now, an edit): stopping only if a
 * turn heard it.
 */
async function stopRunning(chat: Chat): Promise<boolean> {
  if (!isReplying(chat)) return false;
  return (await requestStop(liveBus(), chat.id)) > 0;
}
