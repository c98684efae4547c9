import { z } from "zod";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { chatMemory, editSummary } from "@/lib/chat/memory";
import { SUMMARY_MAX_CHARS, summaryFrom } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

type Params = { id: string };

const editBody = z.strictObject({
  summary: z
    .string({ error: "summary must be a string" })
    .trim()
    .min(1, "summary must not be empty")
    .max(SUMMARY_MAX_CHARS, `summary must be at most ${SUMMARY_MAX_CHARS} characters`),
  /** The compaction version the user edited: a compaction since answers 409. */
  version: z.int32().min(0),
  from: summaryFrom,
});

/** What the model remembers: the summary, its ledger, what it covers, the pins. */
export const GET = route<Params>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  return Response.json({ memory: await chatMemory(await getDb(), chat) });
});

/** The user's own summary: the next request carries it. */
export const PUT = route<Params>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const body = await readJson(request, editBody);
  return Response.json(await editSummary(await getDb(), chat, body));
});
