import { UI_MESSAGE_STREAM_HEADERS } from "ai";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { getDb } from "@/lib/db/client";
import { getChat, isCompacting } from "@/lib/db/queries/chats";
import { route } from "@/lib/http/route";
import { liveBus } from "@/lib/live/bus";
import { resumeTurnStream } from "@/lib/live/streams";

export const dynamic = "force-dynamic";

/**
 * The chat's background compaction as it runs: its `compact_context` trace
 * as a UI message stream, from the start, on any instance. 204 when none
 * runs: what it folded is already in the stored timeline.
 */
export const GET = route<{ id: string }>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  if (!isCompacting(chat)) return new Response(null, { status: 204 });
  const db = await getDb();
  const stream = await resumeTurnStream(liveBus(), chat.id, "compaction", async () => {
    const now = await getChat(db, chat.id);
    return now !== null && isCompacting(now);
  });
  if (!stream) return new Response(null, { status: 204 });
  return new Response(stream.pipeThrough(new TextEncoderStream()), {
    headers: UI_MESSAGE_STREAM_HEADERS,
  });
});
