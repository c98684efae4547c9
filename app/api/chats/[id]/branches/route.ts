import { z } from "zod";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { backgroundCompactionDone } from "@/lib/chat/background-compact";
import { branchSwitches, switchBranch } from "@/lib/chat/branches";
import { holdLease } from "@/lib/chat/lease";
import { PAGE_DEFAULT_LIMIT } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { getChat } from "@/lib/db/queries/chats";
import { messagesFrom, rewriteReach } from "@/lib/db/queries/messages";
import { AppError, chatDeleted } from "@/lib/errors";
import { readJson, readQuery, route } from "@/lib/http/route";
import { rowToUIMessage } from "@/lib/message/ui-message";

export const dynamic = "force-dynamic";

type Params = { id: string };

const messageId = z.string().min(1, "messageId must not be empty").max(100);

const query = z.strictObject({ messageId: messageId.optional() });

const switchBody = z.strictObject({
  messageId,
  position: z.number().int("position must be a whole number").min(1).max(10_000),
});

/**
 * The ‹ n/m › switches of a chat's edited messages; with `?messageId=`, also how many
 * messages an edit of that message would move to an old version (the edit asks first), and
 * the chat's last message they run through (the edit names it: `throughId`).
 */
export const GET = route<Params>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const { messageId: asked } = readQuery(request, query);
  const db = await getDb();
  const reach = asked ? await rewriteReach(db, chat.id, asked) : null;
  if (asked && !reach) throw new AppError("not_found:message", "There is no such message.");
  return Response.json({
    branches: await branchSwitches(db, chat.id),
    ...(asked && reach ? { edit: { messageId: asked, ...reach } } : {}),
  });
});

/**
 * Shows another version of an edited message; answers the chat as it now is from that message
 * on (at least the newest page), with `hasMore` when older messages remain to scroll up to —
 * not the whole chat: a switch near the end of a chat of 30,000 messages answered 34 MB.
 * Waits for a background compaction of the chat to end first.
 */
export const POST = route<Params>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const body = await readJson(request, switchBody);
  const db = await getDb();
  const lease = await holdLease(
    db,
    chat.id,
    "A reply is streaming in this chat. Switch after it finishes.",
  );
  try {
    // A background compaction of the version shown writes its summary and trace entry into
    // it: let it finish first (none starts while this holds the chat), so they go with it.
    // Even when the page that asked has gone: the switch still happens after the wait.
    await backgroundCompactionDone(db, chat.id);
    await switchBranch(db, chat.id, body.messageId, body.position).catch(async (error) => {
      // Deleted meanwhile (a delete stops what waits on the chat): that is the answer then.
      throw (await getChat(db, chat.id)) ? error : chatDeleted();
    });
  } finally {
    await lease.release();
  }
  const shown = await messagesFrom(db, chat.id, body.messageId, PAGE_DEFAULT_LIMIT);
  return Response.json({
    messages: shown.messages.map(rowToUIMessage),
    hasMore: shown.hasMore,
    branches: await branchSwitches(db, chat.id),
  });
});
