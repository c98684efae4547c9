import { getToolName, isToolUIPart } from "ai";
import { z } from "zod";
import type { TraceOutput } from "@/lib/compaction/trace";
import { traceTitle } from "@/lib/compaction/trace-text";
import { summarizesNothing } from "@/lib/compaction/user-notes";
import { byteSizeOfUrl } from "@/lib/context/media-size";
import { countOf } from "@/lib/count-text";
import type { Db } from "@/lib/db/client";
import { listBranches } from "@/lib/db/queries/branches";
import { getChat } from "@/lib/db/queries/chats";
import { loadHistory } from "@/lib/db/queries/messages";
import type { ArchivedMessage, Chat, Message, MessageBranch } from "@/lib/db/schema";
import { isPinnedByUser } from "@/lib/message/pins";
import { answerParts } from "@/lib/message/retry-marker";
import {
  COMPACTION_TRACE_TOOL_NAME,
  type FoldUIMessage,
  messageText,
  rowToUIMessage,
} from "@/lib/message/ui-message";
import { headOf } from "@/lib/message/unstorable-text";
import { literalHeading, literalMarkdown } from "./literal-markdown";
import { applyEdits, parseMarkdown } from "./markdown-edits";
import { headingEdits } from "./markdown-headings";
import { labelEdits } from "./markdown-labels";
import { closeOpenBlock } from "./markdown-open-block";

/**
 * A chat as a file (GET /api/chats/:id/export): Markdown to read, JSON to keep. The JSON holds
 * every stored message, in order, with its parts as stored, the summary and where it stops,
 * which messages are pinned, and the earlier versions of edited turns, so nothing is lost on
 * the way out. The Markdown is the transcript as shown, with the summary and the pins.
 */

export const EXPORT_FORMATS = ["markdown", "json"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const EXPORT_VERSION = 2;
/** Longest title part of a file name; the rest of a long title is not worth a path. */
const FILE_NAME_MAX_CHARS = 60;

const exportedMessage = z.object({
  id: z.string(),
  role: z.enum(["system", "user", "assistant"]),
  createdAt: z.string(),
  /** The answer's text, as the chat shows it. */
  text: z.string(),
  /** Pinned by the user: sent verbatim however much is folded. */
  pinned: z.boolean(),
  parts: z.array(z.unknown()),
  metadata: z.record(z.string(), z.unknown()).nullable(),
});

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
    /** The last message the summary tells; null when nothing is folded. */
    summaryWatermark: z.string().nullable(),
  }),
  messages: z.array(exportedMessage),
  /**
   * Earlier versions of edited or regenerated turns, not shown now (the chat's ‹ n/m ›): each
   * holds the edited message and everything that followed it then, with the summary it had.
   */
  versions: z.array(
    z.object({
      anchorId: z.string(),
      position: z.number(),
      messages: z.array(exportedMessage),
      summary: z.string().nullable(),
      summaryWatermark: z.string().nullable(),
    }),
  ),
});

export type ChatExport = z.infer<typeof chatExportSchema>;

/** What an export holds: the chat, its messages and its hidden versions, read in one snapshot. */
export type ChatSnapshot = { chat: Chat; rows: Message[]; versions: HiddenVersion[] };

/** A version not shown now: its row holds its messages (the shown one's holds none). */
type HiddenVersion = MessageBranch & { messages: ArchivedMessage[] };

const isHidden = (branch: MessageBranch): branch is HiddenVersion => branch.messages !== null;

/**
 * The chat as one moment saw it: a reply stored or a compaction committed while it is read
 * lands wholly in the file or wholly outside it. Null when the chat is gone.
 */
export async function readChatSnapshot(db: Db, chatId: string): Promise<ChatSnapshot | null> {
  return db.transaction(
    async (txn) => {
      const tx = txn as unknown as Db;
      const chat = await getChat(tx, chatId);
      if (!chat) return null;
      const [rows, branches] = await Promise.all([
        loadHistory(tx, chatId),
        listBranches(tx, chatId),
      ]);
      return { chat, rows, versions: branches.filter(isHidden) };
    },
    { isolationLevel: "repeatable read", accessMode: "read only" },
  );
}

/**
 * The JSON file, in pieces: exactly `JSON.stringify(document, null, 2)` and a line break, the
 * messages written out one at a time as they are sent, never the whole file as one string (a
 * JavaScript string holds at most 512 MB: a long chat's file is a 500 at best). Its document
 * is a `ChatExport` (chatExportSchema).
 */
export function* chatJsonPieces({ chat, rows, versions }: ChatSnapshot, now: Date) {
  yield* prettyJson(
    {
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
        summaryWatermark: chat.contextSummary ? chat.summaryWatermark : null,
      },
      messages: new Lazy(rows, (row) =>
        exportMessage({ ...row, createdAt: row.createdAt.toISOString() }),
      ),
      versions: new Lazy(versions, (version) => ({
        anchorId: version.anchorId,
        position: version.position,
        messages: new Lazy(version.messages, exportMessage),
        summary: version.summary,
        summaryWatermark: version.summary ? version.watermark : null,
      })),
    },
    "",
  );
  yield "\n";
}

/** An array written out an element at a time, each made from its item only then. */
class Lazy<T> {
  constructor(
    readonly items: readonly T[],
    readonly make: (item: T) => unknown,
  ) {}
}

/** `JSON.stringify(value, null, 2)` at `indent` (its lines after the first), in pieces. */
function* prettyJson(value: unknown, indent: string): Generator<string> {
  const inner = `${indent}  `;
  if (value instanceof Lazy) {
    if (value.items.length === 0) {
      yield "[]";
      return;
    }
    for (const [i, item] of value.items.entries()) {
      yield `${i === 0 ? "[" : ","}\n${inner}`;
      yield* prettyJson(value.make(item), inner);
    }
    yield `\n${indent}]`;
    return;
  }
  if (isRecord(value) && Object.values(value).some((field) => field instanceof Lazy)) {
    const entries = Object.entries(value);
    for (const [i, [key, field]] of entries.entries()) {
      yield `${i === 0 ? "{" : ","}\n${inner}${JSON.stringify(key)}: `;
      yield* prettyJson(field, inner);
    }
    yield `\n${indent}}`;
    return;
  }
  // A JSON text holds no line break but between its tokens: each line after the first moves in.
  yield JSON.stringify(value, null, 2).replaceAll("\n", `\n${indent}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function exportMessage(row: ArchivedMessage): ChatExport["messages"][number] {
  const message = rowToUIMessage(row);
  return {
    id: row.id,
    role: row.role,
    createdAt: row.createdAt,
    text: textOf(message),
    pinned: isPinnedByUser(message.metadata),
    parts: row.parts,
    metadata: row.metadata ?? null,
  };
}

/**
 * The level of the heading the summary (or the notes alone) goes under, one below the title's.
 * The summary's own sections are written `##` as well: they go one below it.
 */
const MEMORY_HEADING_DEPTH = 2;
const memoryHeading = (title: string) => `${"#".repeat(MEMORY_HEADING_DEPTH)} ${title}`;

/** The level of the heading each message goes under ("### Assistant · …"). */
const ROLE_HEADING_DEPTH = 3;
const ROLE_HEADINGS: Record<Message["role"], string> = {
  user: "You",
  assistant: "Assistant",
  system: "System",
};
const roleHeading = (role: Message["role"], at: Date) =>
  `${"#".repeat(ROLE_HEADING_DEPTH)} ${ROLE_HEADINGS[role]} · ${stamp(at)}`;

/**
 * A readable transcript: each message under who said it; tool calls, compactions and pins as
 * notes; the summary the model is told of the folded part at the end. In pieces, a message at
 * a time: never the whole file as one string.
 */
export function* chatMarkdownPieces(snapshot: ChatSnapshot, now: Date) {
  // Every block holds more than white space; the last one ends the file with one line break.
  let held: string | null = null;
  for (const block of markdownBlocks(snapshot, now)) {
    if (held !== null) yield `${held}\n`;
    held = block;
  }
  yield `${(held ?? "").trimEnd()}\n`;
}

/** The transcript's blocks, each its lines: joined by line breaks, they are the file. */
function* markdownBlocks({ chat, rows, versions }: ChatSnapshot, now: Date) {
  // The conversation's messages: the timeline's own compaction entries are not among them.
  const count = rows.filter((row) => row.metadata?.compaction !== true).length;
  const head = [
    literalHeading(oneLine(chat.title)),
    "",
    `_Exported from Fold on ${stamp(now)} · ${countOf(count, "message")}_`,
  ];
  if (versions.length > 0) {
    head.push(
      "",
      `_Earlier versions of edited turns (${versions.length}) are in the JSON export._`,
    );
  }
  yield head.join("\n");
  for (const [index, row] of rows.entries()) {
    const message = rowToUIMessage(row);
    const labelPrefix = `m${index + 1}-`;
    const notes = notesOf(message, labelPrefix);
    // A user's message is shown as typed (lib/chat/literal-markdown.ts), so it holds no
    // heading; a reply as Markdown placed under its role heading.
    const text =
      row.role === "user"
        ? literalTextOf(message)
        : placedMarkdown(markdownTextOf(message), labelPrefix, ROLE_HEADING_DEPTH);
    if (!text && notes.length === 0) continue;
    const lines = ["", "---", "", roleHeading(row.role, row.createdAt), ""];
    for (const note of notes) lines.push(`> ${note}`, "");
    if (text) lines.push(text, "");
    yield lines.join("\n");
  }
  if (chat.contextSummary && summarizesNothing(chat.contextSummary)) {
    // The user's notes alone: nothing is folded yet.
    yield [
      "",
      "---",
      "",
      memoryHeading("Notes the model keeps"),
      "",
      "_What the model is told with every message, as you wrote it._",
      "",
      placedMarkdown(chat.contextSummary.trim(), "notes-", MEMORY_HEADING_DEPTH),
      "",
    ].join("\n");
  } else if (chat.contextSummary) {
    yield [
      "",
      "---",
      "",
      memoryHeading("Summary of the earlier conversation"),
      "",
      "_What the model is told in place of the folded messages._",
      "",
      placedMarkdown(chat.contextSummary.trim(), "summary-", MEMORY_HEADING_DEPTH),
      "",
    ].join("\n");
  }
}

/**
 * A file name from the title: its letters and digits, of any writing system, and dashes; never
 * empty. Accents come off Latin letters only (Tōkyō → tokyo): in other scripts the combining
 * marks are part of the letter (Hindi's vowel signs, kana's voicing marks, Russian й), and
 * what is left is composed again (Korean syllables, not their jamo).
 */
export function exportFileName(chat: Pick<Chat, "title">, format: ExportFormat): string {
  const base =
    headOf(
      chat.title
        .normalize("NFKD")
        .replace(/(\p{Script=Latin})\p{M}+/gu, "$1")
        .normalize("NFC")
        .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, "")
        .trim()
        .replace(/[\s_-]+/g, "-"),
      FILE_NAME_MAX_CHARS,
    )
      .replace(/-+$/, "")
      .toLowerCase() || "chat";
  return `${base}.${format === "json" ? "json" : "md"}`;
}

/**
 * The download's Content-Disposition: the name as it is (RFC 6266's `filename*`), and for a
 * client that reads only `filename`, its ASCII letters ("chat" when it has none).
 */
export function exportDisposition(name: string): string {
  const dot = name.lastIndexOf(".");
  const ascii =
    name
      .slice(0, dot)
      .replace(/[^\w-]/g, "")
      .replace(/^-+|-+$/g, "") || "chat";
  return `attachment; filename="${ascii}${name.slice(dot)}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

function textOf(message: FoldUIMessage): string {
  return messageText({ parts: answerParts(message.parts) });
}

/**
 * A reply's text as Markdown: its steps' texts a paragraph apart (glued together, a fence
 * closing one step ran into the next step's first line).
 */
function markdownTextOf(message: FoldUIMessage): string {
  const texts = answerParts(message.parts).flatMap((part) =>
    part.type === "text" && part.text.trim() !== "" ? [part.text] : [],
  );
  return texts.join("\n\n");
}

/**
 * Markdown placed in the transcript under a heading of `parentDepth`, parsed once: its link and
 * footnote labels made its own (lib/chat/markdown-labels.ts), its headings nested below that
 * one (lib/chat/markdown-headings.ts: a reply's `# Title` under `### Assistant` is `####`), and
 * a code block or raw HTML block it leaves open (a reply stopped mid-block, a pasted page)
 * closed, so the rest of the transcript stays outside it.
 */
function placedMarkdown(text: string, labelPrefix: string, parentDepth: number): string {
  const tree = parseMarkdown(text);
  return applyEdits(closeOpenBlock(tree, text), [
    ...labelEdits(tree, text, labelPrefix),
    ...headingEdits(tree, text, parentDepth),
  ]);
}

/** A user's message as the chat shows it: its text, as typed, in Markdown that renders so. */
function literalTextOf(message: FoldUIMessage): string {
  const texts = message.parts.flatMap((part) =>
    part.type === "text" && part.text.trim() !== "" ? [literalMarkdown(part.text)] : [],
  );
  return texts.join("\n\n");
}

/**
 * What happened besides text: a pin, a tool call, or older messages folded into the summary.
 * `labelPrefix` is the message's own, which its reasoning's labels extend.
 */
function notesOf(message: FoldUIMessage, labelPrefix: string): string[] {
  const marks = [
    ...(isPinnedByUser(message.metadata) ? ["_Pinned._"] : []),
    ...(message.metadata?.stopped ? ["_Stopped._"] : []),
  ];
  return marks.concat(
    answerParts(message.parts).flatMap((part, index) => {
      // What the reply thought, as the chat shows it under "Reasoning": quoted line by line.
      // Placed as the reply's own text is: each step's labels its own, its headings nested.
      if (part.type === "reasoning") {
        const text = placedMarkdown(
          part.text.trim(),
          `${labelPrefix}r${index + 1}-`,
          ROLE_HEADING_DEPTH,
        );
        return text ? [`_Reasoning:_\n> ${text.split("\n").join("\n> ")}`] : [];
      }
      // A file the model made (an image): named, its bytes in the JSON export.
      if (part.type === "file") {
        const bytes = byteSizeOfUrl(part.url);
        const size = bytes === undefined ? "" : `, ${formatBytes(bytes)}`;
        return [
          `_File${part.filename ? ` ${part.filename}` : ""} (${part.mediaType}${size}): in the JSON export._`,
        ];
      }
      if (!isToolUIPart(part)) return [];
      const name = getToolName(part);
      if (name === COMPACTION_TRACE_TOOL_NAME) {
        // What the timeline's card says: a fold, an edit of the memory, a cut, a failure.
        const output = part.state === "output-available" ? (part.output as TraceOutput) : null;
        if (!output?.outcome) return ["_Older messages were being summarized._"];
        const messages = Number(output.messagesSummarized) || 0;
        const count = messages > 0 ? ` (${countOf(messages, "message")})` : "";
        return [`_${traceTitle(output)}${count}._`];
      }
      return [`_Used the tool \`${name}\`._`];
    }),
  );
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function stamp(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
