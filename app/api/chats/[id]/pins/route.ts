import { z } from "zod";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { chatMemory, setPinned } from "@/lib/chat/memory";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

const pinBody = z.strictObject({
  messageId: z.string().min(1, "messageId must not be empty").max(100),
  pinned: z.boolean({ error: "pinned must be true or false" }),
});

/** Pins a message (never folded into the summary) or unpins it. */
export const PUT = route<{ id: string }>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const body = await readJson(request, pinBody);
  const db = await getDb();
  await setPinned(db, chat.id, body.messageId, body.pinned);
  return Response.json({ memory: await chatMemory(db, chat) });
});
