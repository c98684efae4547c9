import { UI_MESSAGE_STREAM_HEADERS } from "ai";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { getChat, isReplying } from "@/lib/db/queries/chats";
import { route } from "@/lib/http/route";
import { liveBus } from "@/lib/live/bus";
import { resumeTurnStream } from "@/lib/live/streams";

export const dynamic = "force-dynamic";

/**
 * The chat's reply as it streams, from its first chunk, for a page that
 * opened mid-reply (a reload, a second tab, another instance). 204 when no
 * reply is streaming: the stored history is complete.
 */
export const GET = route<{ id: string }>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  if (!isReplying(chat)) return new Response(null, { status: 204 });
  const db = await getDb();
  const stream = await resumeTurnStream(liveBus(), chat.id, "turn", async () => {
    const now = await getChat(db, chat.id);
    return now !== null && isReplying(now);
  });
  if (!stream) return new Response(null, { status: 204 });
  return new Response(stream.pipeThrough(new TextEncoderStream()), {
    headers: UI_MESSAGE_STREAM_HEADERS,
  });
});
