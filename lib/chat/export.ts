import { getToolName, isToolUIPart } from "ai";
import { z } from "zod";
import type { Chat, Message } from "@/lib/db/schema";
import { answerParts } from "@/lib/message/retry-marker";
import { COMPACTION_TRACE_TOOL_NAME, messageText, rowToUIMessage } from "@/lib/message/ui-message";

/**
 * A chat as a file (GET /api/chats/:id/export): Markdown to read, JSON to keep. The JSON holds
 * every stored message, in order, with its parts as stored, so nothing is lost on the way out.
 */

export const EXPORT_FORMATS = ["markdown", "json"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const EXPORT_VERSION = 1;
/** Longest title part of a file name; the rest of a long title is not worth a path. */
const FILE_NAME_MAX_CHARS = 60;

export const chatExportSchema = z.object({
  format: z.literal("fold-chat"),
  version: z.literal(EXPORT_VERSION),
  exportedAt: z.string(),
  chat: z.object({
    id: z.string(),
    title: z.string(),
    modelId: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    /** What the model is told about the folded part of the chat, if anything is folded. */
    summary: z.string().nullable(),
  }),
  messages: z.array(
    z.object({
      id: z.string(),
      role: z.enum(["system", "user", "assistant"]),
      createdAt: z.string(),
      /** The answer's text, as the chat shows it. */
      text: z.string(),
      parts: z.array(z.unknown()),
      metadata: z.record(z.string(), z.unknown()).nullable(),
    }),
  ),
});

export type ChatExport = z.infer<typeof chatExportSchema>;

export function chatToJson(chat: Chat, rows: readonly Message[], now: Date): ChatExport {
  return {
    format: "fold-chat",
    version: EXPORT_VERSION,
    exportedAt: now.toISOString(),
    chat: {
      id: chat.id,
      title: chat.title,
      modelId: chat.modelId,
      createdAt: chat.createdAt.toISOString(),
      updatedAt: chat.updatedAt.toISOString(),
      summary: chat.contextSummary,
    },
    messages: rows.map((row) => ({
      id: row.id,
      role: row.role,
      createdAt: row.createdAt.toISOString(),
      text: textOf(row),
      parts: row.parts,
      metadata: row.metadata ?? null,
    })),
  };
}

const ROLE_HEADINGS: Record<Message["role"], string> = {
  user: "You",
  assistant: "Assistant",
  system: "System",
};

/** A readable transcript: each message under who said it; tool calls and compactions as notes. */
export function chatToMarkdown(chat: Chat, rows: readonly Message[], now: Date): string {
  const lines = [
    `# ${oneLine(chat.title)}`,
    "",
    `_Exported from Fold on ${stamp(now)} · ${rows.length} ${rows.length === 1 ? "message" : "messages"}_`,
  ];
  for (const row of rows) {
    const notes = notesOf(row);
    const text = textOf(row);
    if (!text && notes.length === 0) continue;
    lines.push("", "---", "", `### ${ROLE_HEADINGS[row.role]} · ${stamp(row.createdAt)}`, "");
    for (const note of notes) lines.push(`> ${note}`, "");
    if (text) lines.push(text, "");
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

/** A file name from the title: letters, digits and dashes, never empty. */
export function exportFileName(chat: Pick<Chat, "title">, format: ExportFormat): string {
  const base =
    chat.title
      .normalize("NFKD")
      .replace(/[^\w\s-]/g, "")
      .trim()
      .replace(/[\s_-]+/g, "-")
      .slice(0, FILE_NAME_MAX_CHARS)
      .replace(/-+$/, "")
      .toLowerCase() || "chat";
  return `${base}.${format === "json" ? "json" : "md"}`;
}

function textOf(row: Message): string {
  return messageText({ parts: answerParts(rowToUIMessage(row).parts) });
}

/** What happened besides text: a tool call, or older messages folded into the summary. */
function notesOf(row: Message): string[] {
  return answerParts(rowToUIMessage(row).parts).flatMap((part) => {
    if (!isToolUIPart(part)) return [];
    const name = getToolName(part);
    if (name === COMPACTION_TRACE_TOOL_NAME) {
      const output = part.state === "output-available" ? part.output : undefined;
      const messages =
        output && typeof output === "object" && "messagesSummarized" in output
          ? Number(output.messagesSummarized)
          : 0;
      return messages > 0
        ? [`_Older messages were summarized (${messages} messages)._`]
        : ["_Older messages were summarized._"];
    }
    return [`_Used the tool \`${name}\`._`];
  });
}

function stamp(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
