import { z } from "zod";
import { requireChat, requireUser } from "@/lib/auth/guards";
import { changeNote } from "@/lib/chat/memory";
import { SUMMARY_MAX_CHARS, summaryFrom } from "@/lib/chat/schemas";
import { getDb } from "@/lib/db/client";
import { readJson, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

type Params = { id: string };

/** A note is a line the model keeps: a fact or a wish, not a document (pin a message for that). */
const NOTE_MAX_CHARS = 500;

const noteBody = z.strictObject({
  note: z
    .string({ error: "note must be a string" })
    .trim()
    .min(1, "note must not be empty")
    .max(NOTE_MAX_CHARS, `note must be at most ${NOTE_MAX_CHARS} characters`)
    .refine((note) => !/[\r\n]/.test(note), "note must be one line"),
  /** The compaction version the user saw: a compaction since answers 409. */
  version: z.int32().min(0),
  from: summaryFrom,
});

/** Adds a note the model keeps, as written, however much of the chat is folded. */
export const POST = route<Params>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const body = await readJson(request, noteBody);
  return Response.json(await changeNote(await getDb(), chat, body));
});

/**
 * Any line of the section, as the memory lists it: a rollback or an edit of the summary may
 * have put a longer one there than a note added here can be.
 */
const removeBody = z.strictObject({
  note: z
    .string({ error: "note must be a string" })
    .trim()
    .min(1, "note must not be empty")
    .max(SUMMARY_MAX_CHARS, `note must be at most ${SUMMARY_MAX_CHARS} characters`),
  version: z.int32().min(0),
  from: summaryFrom,
});

/** Takes a note away. */
export const DELETE = route<Params>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const body = await readJson(request, removeBody);
  return Response.json(await changeNote(await getDb(), chat, { ...body, remove: true }));
});
