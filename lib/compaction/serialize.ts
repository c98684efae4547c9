/**
 * Stage 1 (DESIGN §8.3): the span as text the summarizer reads as *data*. Role
 * tags instead of chat messages, so the summarizer summarizes the conversation
 * rather than continuing it. Tool calls keep their arguments (that is where the
 * URLs and paths are); tool outputs are cut to head + tail.
 */
import { type DynamicToolUIPart, getToolName, isToolUIPart, type ToolUIPart } from "ai";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { COMPACTION_TRACE_TOOL_NAME } from "@/lib/message/ui-message";
import { headOf, tailOf } from "@/lib/message/unstorable-text";

/** ~2,000 chars of a tool output keep its shape and most identifiers at ~500 tokens. */
export const TOOL_OUTPUT_MAX_CHARS = 2_000;
/** Share of a cut kept from the start; the rest comes from the end, where errors and totals sit. */
const HEAD_SHARE = 0.5;
/** Tags Fold's prompts use; content must never be able to open or close one of them. */
const RESERVED_TAGS = [
  "user",
  "assistant",
  "system",
  "tool-call",
  "tool-result",
  "tool-error",
  "conversation",
  "previous-summary",
  "conversation-summary",
];
const RESERVED_TAG_PATTERN = new RegExp(`<(?=\\s*/?\\s*(?:${RESERVED_TAGS.join("|")})\\b)`, "gi");
/** Looks like "<" but cannot start a tag. */
const NEUTRAL_ANGLE = "‹";

export type SerializeOptions = {
  /** Each tool output (and each tool call's arguments) is cut to about this many chars. */
  toolOutputChars?: number;
};

type Part = FoldUIMessage["parts"][number];
type ToolPart = ToolUIPart | DynamicToolUIPart;
type Block = { role: "user" | "assistant" | "system"; lines: string[] };

/** The span as `<user>` / `<assistant>` blocks separated by blank lines. */
export function serializeSpan(
  messages: readonly FoldUIMessage[],
  options?: SerializeOptions,
): string {
  return messages
    .map((message) => serializeMessage(message, options))
    .filter((text) => text.length > 0)
    .join("\n\n");
}

/** One message's blocks; empty when nothing in it reaches the summarizer (reasoning, trace only). */
export function serializeMessage(message: FoldUIMessage, options: SerializeOptions = {}): string {
  const maxChars = options.toolOutputChars ?? TOOL_OUTPUT_MAX_CHARS;
  const blocks: Block[] = [];
  const lines = (role: Block["role"]): string[] => {
    const last = blocks.at(-1);
    if (last?.role === role) return last.lines;
    const block: Block = { role, lines: [] };
    blocks.push(block);
    return block.lines;
  };
  for (const part of message.parts) {
    if (part.type === "steering-message") {
      // A user message injected mid-turn: its own block between the assistant's.
      const steered = part.parts.flatMap((p) => partLines(p, maxChars));
      if (steered.length > 0) lines("user").push(...steered);
      continue;
    }
    const partText = partLines(part, maxChars);
    if (partText.length > 0) lines(message.role).push(...partText);
  }
  return blocks
    .filter((block) => block.lines.length > 0)
    .map((block) => `<${block.role}>\n${block.lines.join("\n")}\n</${block.role}>`)
    .join("\n\n");
}

/**
 * A reply of several steps (a tool loop stored as one message) serialized step by step, each
 * step's blocks on their own; null when the message has fewer than two steps.
 */
export function serializeSteps(
  message: FoldUIMessage,
  options: SerializeOptions = {},
): string[] | null {
  const steps: Part[][] = [[]];
  for (const part of message.parts) {
    if (part.type === "step-start" && (steps.at(-1)?.length ?? 0) > 0) steps.push([]);
    steps.at(-1)?.push(part);
  }
  if (steps.length < 2) return null;
  return steps
    .map((parts) => serializeMessage({ ...message, parts }, options))
    .filter((text) => text.length > 0);
}

function partLines(part: Part, maxChars: number): string[] {
  if (part.type === "text") {
    const text = part.text.trim();
    return text ? [neutralizeTags(text)] : [];
  }
  if (part.type === "file") {
    const where = part.url.startsWith("data:") ? (part.filename ?? "inline") : part.url;
    const name = part.filename && where !== part.filename ? `${part.filename} ` : "";
    return [neutralizeTags(`[file: ${name}${where} (${part.mediaType})]`)];
  }
  if (isToolUIPart(part)) return toolLines(part, maxChars);
  // reasoning, step-start, source-*, data-*, custom: not conversation content.
  return [];
}

function toolLines(part: ToolPart, maxChars: number): string[] {
  const name = getToolName(part);
  if (name === COMPACTION_TRACE_TOOL_NAME || part.state === "input-streaming") return [];
  const attr = `name="${name.replace(/[^\w.:-]/g, "_")}"`;
  const input = cutHeadTail(jsonText(part.input), maxChars);
  const out = [`<tool-call ${attr}>${neutralizeTags(input)}</tool-call>`];
  const error = (text: string) =>
    `<tool-error ${attr}>${neutralizeTags(cutHeadTail(text, maxChars))}</tool-error>`;
  switch (part.state) {
    case "output-available": {
      const output = cutHeadTail(outputText(part.output), maxChars);
      out.push(`<tool-result ${attr}>${neutralizeTags(output)}</tool-result>`);
      break;
    }
    case "output-error":
      out.push(error(part.errorText));
      break;
    case "output-denied":
      out.push(
        error(`denied by the user${part.approval.reason ? `: ${part.approval.reason}` : ""}`),
      );
      break;
    case "approval-responded":
      if (!part.approval.approved) {
        out.push(error(`denied${part.approval.reason ? `: ${part.approval.reason}` : ""}`));
      }
      break;
    default:
      break; // called, no result yet
  }
  return out;
}

/**
 * `text` cut to about `maxChars`: its head and tail around a marker that says
 * how much is missing, so the summarizer knows the middle exists.
 */
export function cutHeadTail(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // The marker's own length depends on the count; the estimate is off by a digit at most.
  const probe = omittedMarker(text.length);
  const keep = Math.max(0, maxChars - probe.length);
  // Between whole characters: half an emoji is text no provider takes (a lone surrogate).
  const headChars = Math.ceil(keep * HEAD_SHARE);
  const head = headOf(text, headChars);
  const tail = tailOf(text, keep - headChars);
  const omitted = text.length - head.length - tail.length;
  return `${head}${omittedMarker(omitted)}${tail}`;
}

function omittedMarker(chars: number): string {
  return `\n[… ${chars.toLocaleString("en-US")} chars omitted …]\n`;
}

/**
 * Makes literal `<user>`, `</assistant>`, `</conversation>`… in content inert
 * by swapping their `<` for a look-alike, so content cannot close a tag.
 */
export function neutralizeTags(text: string): string {
  return text.replace(RESERVED_TAG_PATTERN, NEUTRAL_ANGLE);
}

/** Tool arguments as the model wrote them: JSON. */
function jsonText(value: unknown): string {
  if (value === undefined) return "";
  return JSON.stringify(value) ?? "";
}

/** A string output as is; anything else as JSON. */
function outputText(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? "null");
}
