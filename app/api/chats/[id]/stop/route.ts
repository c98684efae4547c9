import { requireChat, requireUser } from "@/lib/auth/guards";
import { isReplying } from "@/lib/db/queries/chats";
import { route } from "@/lib/http/route";
import { liveBus } from "@/lib/live/bus";
import { requestStop } from "@/lib/live/stop";

export const dynamic = "force-dynamic";

/**
 * Stop the chat's running reply, wherever it runs: the turn aborts its model
 * call and stores what was written, marked as stopped. Answers whether a
 * reply was running.
 */
export const POST = route<{ id: string }>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  if (!isReplying(chat)) return Response.json({ stopping: false });
  await requestStop(liveBus(), chat.id);
  return Response.json({ stopping: true }, { status: 202 });
});
