import type { LanguageModelV4Prompt } from "@ai-sdk/provider";
import {
  type DynamicToolUIPart,
  getToolName,
  isToolUIPart,
  type ModelMessage,
  type ToolUIPart,
  type UIMessage,
} from "ai";
import { LruMap } from "@/lib/lru-map";
import { isStored, storedContentKey } from "@/lib/message/stored";
import { COMPACTION_TRACE_TOOL_NAME } from "@/lib/message/ui-message";
import { base64Bytes, byteSizeOf, byteSizeOfUrl, isTagged } from "./media-size";

/**
 * What the model receives, in a neutral shape (DESIGN §5). UIMessages (stored
 * history), ModelMessages (inside a step) and provider prompts all normalize to
 * these, so one estimator counts every one of them the same way.
 */
export type CountUnit =
  | { type: "text"; text: string }
  /** `input` is the JSON-encoded arguments, exactly as the model wrote them. */
  | { type: "tool-call"; toolName: string; input: string }
  /** `output` is the tool result serialized the way it goes on the wire. */
  | { type: "tool-result"; toolName: string; output: string }
  /** Sizes only: the estimator never looks at (or tokenizes) file bytes. */
  | { type: "file"; mediaType: string; byteSize?: number }
  | { type: "image"; mediaType: string; byteSize?: number; width?: number; height?: number }
  /** The conversation summary as sent, kept apart so a breakdown can show it. */
  | { type: "summary"; text: string };

/**
 * The units of one stored or in-step message. `key` (the message id) lets the
 * estimator memoize; `wireMessages` is how many provider messages the units
 * travel in (one UI assistant message becomes several: one per step, plus a
 * `tool` message per step with results). Each pays the per-message overhead.
 * Defaults to 1 when there are units, 0 when there are none.
 */
export type CountMessage = {
  key?: string;
  units: CountUnit[];
  wireMessages?: number;
};

/** What `convertToModelMessages` sends for a denied tool call without a reason. */
const OUTPUT_DENIED_TEXT = "Tool call execution denied.";
/** Media type for a file the SDK gives us without one. */
const UNKNOWN_MEDIA_TYPE = "application/octet-stream";
/** Our wire text for an `execution-denied` result without a reason (providers phrase it similarly). */
const EXECUTION_DENIED_TEXT = "Tool execution denied.";

type ToolPart = ToolUIPart | DynamicToolUIPart;
type UIPart = UIMessage["parts"][number];

// ---------------------------------------------------------------------------
// UIMessage → units. Mirrors `convertToModelMessages` (ai 7) called without
// tools, so the same conversation counts the same either way.
// ---------------------------------------------------------------------------

/**
 * Units of stored messages, built once each: a turn estimates its messages several times,
 * and the next turn reads most of them again (kept by content key while they are recent).
 * Their lists are frozen, so the estimator may keep what it derives from them (tokens.ts).
 */
const storedUnits = new WeakMap<UIMessage, CountMessage>();
const unitsByContent = new LruMap<string, CountMessage>(10_000, {
  of: (message) => message.units.reduce((sum, unit) => sum + unitChars(unit), 0),
  // Characters of text kept in all (~2 bytes each): long tool outputs must not pin memory.
  max: 8_000_000,
});

/** How much text a unit holds (what caching it keeps alive), plus a little for the unit itself. */
function unitChars(unit: CountUnit): number {
  const text =
    unit.type === "text" || unit.type === "summary"
      ? unit.text
      : unit.type === "tool-call"
        ? unit.input
        : unit.type === "tool-result"
          ? unit.output
          : "";
  return text.length + 32;
}

export function unitsFromUIMessage(message: UIMessage): CountMessage {
  if (!isStored(message)) return buildUnits(message);
  let units = storedUnits.get(message);
  if (units) return units;
  const key = storedContentKey(message);
  units = key === undefined ? undefined : unitsByContent.get(key);
  if (!units) {
    units = buildUnits(message);
    Object.freeze(units.units);
    if (key !== undefined) unitsByContent.set(key, units);
  }
  storedUnits.set(message, units);
  return units;
}

function buildUnits(message: UIMessage): CountMessage {
  if (message.role === "system") {
    // convertToModelMessages joins a system message's text parts into one string.
    const text = message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
    return withWire(message.id, text ? [{ type: "text", text }] : [], text ? 1 : 0);
  }
  if (message.role === "user") {
    const units = message.parts.flatMap(userPartUnits);
    return withWire(message.id, units, units.length > 0 ? 1 : 0);
  }

  // Assistant: split into step blocks at `step-start`, like the converter does.
  const units: CountUnit[] = [];
  let wireMessages = 0;
  let block: UIPart[] = [];
  const flush = () => {
    const { callUnits, resultUnits } = assistantBlockUnits(block);
    if (callUnits.length > 0) wireMessages += 1;
    if (resultUnits.length > 0) wireMessages += 1;
    units.push(...callUnits, ...resultUnits);
    block = [];
  };
  for (const part of message.parts) {
    if (part.type === "step-start") flush();
    else if (part.type === "steering-message") {
      flush();
      const steered = part.parts.flatMap(userPartUnits);
      if (steered.length > 0) wireMessages += 1;
      units.push(...steered);
    } else block.push(part);
  }
  flush();
  return withWire(message.id, units, wireMessages);
}

function userPartUnits(part: UIPart): CountUnit[] {
  if (part.type === "text") return part.text ? [{ type: "text", text: part.text }] : [];
  if (part.type === "file") {
    const byteSize = part.providerReference ? undefined : byteSizeOfUrl(part.url);
    return [mediaUnit(part.mediaType, byteSize)];
  }
  return []; // data-* parts are dropped by the converter unless a convertDataPart is given
}

/** One step block: what goes in the assistant message, and what goes in the `tool` message after it. */
function assistantBlockUnits(block: UIPart[]): {
  callUnits: CountUnit[];
  resultUnits: CountUnit[];
} {
  const callUnits: CountUnit[] = [];
  const resultUnits: CountUnit[] = [];
  for (const part of block) {
    if (part.type === "text") {
      if (part.text) callUnits.push({ type: "text", text: part.text });
    } else if (isToolUIPart(part)) {
      const toolName = getToolName(part);
      if (toolName === COMPACTION_TRACE_TOOL_NAME || part.state === "input-streaming") continue;
      const input =
        part.state === "output-error" ? (part.input ?? legacyRawInput(part)) : part.input;
      callUnits.push({ type: "tool-call", toolName, input: serializeJson(input) });
      const result = toolPartResult(part);
      if (!result) continue;
      const unit: CountUnit = { type: "tool-result", toolName, output: result.output };
      (result.inAssistantMessage ? callUnits : resultUnits).push(unit);
    }
    // reasoning, reasoning-file, source-*, custom and data-* parts are not counted, nor a file
    // the model made: OpenAI's, Anthropic's and OpenAI-compatible providers never send an
    // assistant message's files back (only Google's do, at a few hundred tokens an image).
  }
  return { callUnits, resultUnits };
}

/**
 * The result the converter would send for a tool part, and where: provider-executed
 * results ride in the assistant message, the rest in the `tool` message after it.
 */
function toolPartResult(
  part: ToolPart,
): { output: string; inAssistantMessage: boolean } | undefined {
  if (part.state === "approval-responded") {
    if (part.approval.approved) return undefined;
    return { output: part.approval.reason ?? EXECUTION_DENIED_TEXT, inAssistantMessage: false };
  }
  if (part.providerExecuted === true) {
    if (part.state === "output-available") {
      return { output: serializeOutputValue(part.output), inAssistantMessage: true };
    }
    if (part.state === "output-error") {
      return { output: serializeJson(part.errorText), inAssistantMessage: true }; // error-json
    }
    return undefined;
  }
  switch (part.state) {
    case "output-available":
      return { output: serializeOutputValue(part.output), inAssistantMessage: false };
    case "output-error":
      return { output: part.errorText, inAssistantMessage: false };
    case "output-denied":
      return { output: part.approval.reason ?? OUTPUT_DENIED_TEXT, inAssistantMessage: false };
    default:
      return undefined;
  }
}

function legacyRawInput(part: ToolPart): unknown {
  return "rawInput" in part ? part.rawInput : undefined;
}

// ---------------------------------------------------------------------------
// ModelMessage → units.
// ---------------------------------------------------------------------------

type ModelPart = Exclude<ModelMessage["content"], string>[number];
type ToolOutput = Extract<ModelPart, { type: "tool-result" }>["output"];

/**
 * One message's units. `reasoning`: whether its reasoning parts count — only in the tool loop
 * now running (after the latest user message) do providers read them back: Anthropic and OpenAI
 * drop earlier turns' thinking, and chat templates of reasoning models render only the current
 * loop's. Use `unitsFromModelMessages` for a list, which knows where that loop starts.
 */
export function unitsFromModelMessage(
  message: ModelMessage,
  key?: string,
  reasoning = false,
): CountMessage {
  const units: CountUnit[] =
    typeof message.content === "string"
      ? message.content
        ? [{ type: "text", text: message.content }]
        : []
      : message.content.flatMap((part) =>
          // A file the model made is not sent back (as in assistantBlockUnits).
          message.role === "assistant" && (part.type === "file" || part.type === "image")
            ? []
            : modelPartUnits(part, reasoning),
        );
  return withWire(key, units, units.length > 0 ? 1 : 0);
}

/**
 * The units of a list of messages as a step sends them: the reasoning of the loop running
 * since the latest user message counts (a long thinking loop fills the window with it), the
 * reasoning of earlier turns does not.
 */
export function unitsFromModelMessages(messages: readonly ModelMessage[]): CountMessage[] {
  const lastUser = messages.findLastIndex((m) => m.role === "user");
  return messages.map((m, i) => unitsFromModelMessage(m, undefined, i > lastUser));
}

/**
 * A LanguageModelV4 prompt (what a provider receives) → one CountMessage per
 * prompt message. Its message shapes are a subset of ModelMessage's.
 */
export function unitsFromProviderPrompt(prompt: LanguageModelV4Prompt): CountMessage[] {
  return unitsFromModelMessages(prompt);
}

function modelPartUnits(part: ModelPart, reasoning: boolean): CountUnit[] {
  switch (part.type) {
    case "text":
      return part.text ? [{ type: "text", text: part.text }] : [];
    case "reasoning":
      return reasoning && part.text ? [{ type: "text", text: part.text }] : [];
    case "image":
      return [imageUnit(part.mediaType ?? "image", byteSizeOf(part.image))];
    case "file":
      return fileUnits(part.mediaType, part.data);
    case "tool-call":
      if (part.toolName === COMPACTION_TRACE_TOOL_NAME) return [];
      return [{ type: "tool-call", toolName: part.toolName, input: serializeJson(part.input) }];
    case "tool-result":
      if (part.toolName === COMPACTION_TRACE_TOOL_NAME) return [];
      return toolResultUnits(part.toolName, part.output);
    default:
      // reasoning-file, custom and tool approval parts are not counted.
      return [];
  }
}

function toolResultUnits(toolName: string, output: ToolOutput): CountUnit[] {
  switch (output.type) {
    case "text":
    case "error-text":
      return [{ type: "tool-result", toolName, output: output.value }];
    case "json":
    case "error-json":
      return [{ type: "tool-result", toolName, output: serializeJson(output.value) }];
    case "execution-denied":
      return [{ type: "tool-result", toolName, output: output.reason ?? EXECUTION_DENIED_TEXT }];
    case "content": {
      const texts: string[] = [];
      const media: CountUnit[] = [];
      for (const item of output.value) {
        if (item.type === "text") texts.push(item.text);
        else media.push(...contentMediaUnits(item));
      }
      return [{ type: "tool-result", toolName, output: texts.join("\n") }, ...media];
    }
  }
}

type ContentItem = Extract<ToolOutput, { type: "content" }>["value"][number];

/** Files and images inside a multi-part tool result (incl. the SDK's deprecated shapes). */
function contentMediaUnits(item: ContentItem): CountUnit[] {
  switch (item.type) {
    case "file":
      return fileUnits(item.mediaType, item.data);
    case "file-data":
    case "image-data":
      return [mediaUnit(item.mediaType, base64Bytes(item.data))];
    case "file-url":
      return [mediaUnit(item.mediaType ?? UNKNOWN_MEDIA_TYPE, byteSizeOfUrl(item.url))];
    case "image-url":
      return [mediaUnit("image", byteSizeOfUrl(item.url))];
    case "image-file-id":
      return [mediaUnit("image", undefined)];
    case "file-id":
    case "file-reference":
      return [mediaUnit(UNKNOWN_MEDIA_TYPE, undefined)];
    default:
      return [];
  }
}

function fileUnits(mediaType: string, data: unknown): CountUnit[] {
  if (isTagged(data, "text") && typeof data.text === "string") {
    return data.text ? [{ type: "text", text: data.text }] : []; // inline text document
  }
  return [mediaUnit(mediaType, byteSizeOf(data))];
}

// ---------------------------------------------------------------------------
// Shared helpers.
// ---------------------------------------------------------------------------

function withWire(key: string | undefined, units: CountUnit[], wireMessages: number): CountMessage {
  return key === undefined ? { units, wireMessages } : { key, units, wireMessages };
}

function mediaUnit(mediaType: string, byteSize: number | undefined): CountUnit {
  if (mediaType.startsWith("image")) return imageUnit(mediaType, byteSize);
  return byteSize === undefined
    ? { type: "file", mediaType }
    : { type: "file", mediaType, byteSize };
}

function imageUnit(mediaType: string, byteSize: number | undefined): CountUnit {
  return byteSize === undefined
    ? { type: "image", mediaType }
    : { type: "image", mediaType, byteSize };
}

/** JSON as the provider serializes it; `undefined` (no input yet) sends nothing. */
function serializeJson(value: unknown): string {
  return JSON.stringify(value) ?? "";
}

/** A tool output the converter sends as text when it is a string, JSON otherwise (`undefined` → `null`). */
function serializeOutputValue(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? "null");
}
