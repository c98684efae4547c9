import { z } from "zod";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { continueInNewChat } from "@/lib/chat/memory";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";
import { consumeRateLimit } from "@/lib/limits/rate-limit";

export const dynamic = "force-dynamic";

/** Continue in a new chat: its context begins with this chat's summary and ledger. */
export const POST = route<{ id: string }>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  await readJson(request, z.strictObject({}), { emptyAs: {} });
  const point = await consumeRateLimit("continue", user.id);
  const created = await continueInNewChat(await getDb(), user.id, chat).catch(
    async (error: unknown) => {
      // Refused (the chat deleted meanwhile, say) or failed (the database down): the copy is
      // one transaction, so nothing was copied, and the point goes back.
      await point.refund();
      throw error;
    },
  );
  return Response.json({ chat: created }, { status: 201 });
});
