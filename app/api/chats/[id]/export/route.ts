import { z } from "zod";
import { requireChat, requireUser } from "@/lib/auth/guards";
import {
  chatJsonPieces,
  chatMarkdownPieces,
  EXPORT_FORMATS,
  exportDisposition,
  exportFileName,
  readChatSnapshot,
} from "@/lib/chat/export";
import { getDb } from "@/lib/db/client";
import { chatDeleted } from "@/lib/errors";
import { readQuery, route } from "@/lib/http/route";
import { textPiecesStream } from "@/lib/http/text-pieces";

export const dynamic = "force-dynamic";

const query = z.strictObject({
  format: z.enum(EXPORT_FORMATS, { error: "must be markdown or json" }),
});

/** Downloads the chat as Markdown or JSON; another user's chat is a 404 like any other. */
export const GET = route<{ id: string }>(async (request, { params }) => {
  const user = await requireUser(request);
  const chat = await requireChat(user, (await params).id);
  const { format } = readQuery(request, query);
  const snapshot = await readChatSnapshot(await getDb(), chat.id);
  // Deleted between the two reads.
  if (!snapshot) throw chatDeleted();
  const now = new Date();
  // Written out as it is sent: a long chat's file is larger than one string may be.
  const pieces =
    format === "json" ? chatJsonPieces(snapshot, now) : chatMarkdownPieces(snapshot, now);
  return new Response(textPiecesStream(pieces), {
    headers: {
      "content-type":
        format === "json" ? "application/json; charset=utf-8" : "text/markdown; charset=utf-8",
      "content-disposition": exportDisposition(exportFileName(chat, format)),
      "cache-control": "no-store",
    },
  });
});
