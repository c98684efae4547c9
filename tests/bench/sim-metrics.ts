import { getToolName, isToolUIPart, type UIMessage } from "ai";
import { contentText } from "../fixtures/fake-openai/request";
import { isSummaryRequest } from "../fixtures/fake-openai/summarizer";
import { countTextTokens } from "../fixtures/fake-openai/tokens";
import type { RecordedRequest } from "../fixtures/fake-openai/types";

/**
 * What the `sim` benchmark reads off the fake server's recorded requests and the stored
 * history. Counts with the fake server's own o200k tokenizer. Loads no Fold module.
 */

/** The timeline's compaction trace: not conversation content. */
const TRACE_TOOL_NAME = "compact_context";

export function isSummarizerRequest(request: RecordedRequest): boolean {
  return isSummaryRequest(request.messages);
}

/** The span a summarizer request carried: the text inside its `<conversation>` tags. */
export function summarizerSpanText(request: RecordedRequest): string {
  const prompt = request.messages
    .filter((m) => m.role === "user")
    .map(contentText)
    .join("\n");
  const open = prompt.indexOf("<conversation>");
  const close = prompt.lastIndexOf("</conversation>");
  if (open === -1 || close === -1 || close < open) return "";
  return prompt.slice(open + "<conversation>".length, close).trim();
}

export function summarizerSpanTokens(request: RecordedRequest): number {
  return countTextTokens(summarizerSpanText(request));
}

/** The 1-based turn numbers whose user message opens a `<user>` block of the span. */
export function turnsInSpan(spanText: string): number[] {
  return [...spanText.matchAll(/<user>\n(?:Turn (\d+):)/g)].map((m) => Number(m[1]));
}

/** Everything a chat request showed the model, message contents and tool calls, as one text. */
export function requestText(request: RecordedRequest): string {
  return request.messages
    .map((m) => {
      const calls = Array.isArray(m.tool_calls) ? JSON.stringify(m.tool_calls) : "";
      return `${contentText(m)}\n${calls}`;
    })
    .join("\n");
}

/**
 * Whether `value` occurs in `text` as itself, not inside a longer token: "30 s" is not in
 * "130 s", "9f2c1e7a4b3d" is not in "9f2c1e7a4b3d5".
 */
export function containsVerbatim(text: string, value: string): boolean {
  const wordStart = /^\w/.test(value);
  const wordEnd = /\w$/.test(value);
  for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + 1)) {
    const before = text[at - 1] ?? "";
    const after = text[at + value.length] ?? "";
    if ((!wordStart || !/\w/.test(before)) && (!wordEnd || !/\w/.test(after))) return true;
  }
  return false;
}

function jsonText(value: unknown): string {
  if (value === undefined) return "";
  return typeof value === "string" ? value : (JSON.stringify(value) ?? "");
}

/**
 * Content tokens of a stored message: its text parts, and each tool call's arguments and
 * output. Framing, reasoning, step markers and the compaction trace are not content.
 */
export function contentTokens(message: UIMessage): number {
  let tokens = 0;
  for (const part of message.parts) {
    if (part.type === "text") tokens += countTextTokens(part.text);
    else if (isToolUIPart(part) && getToolName(part) !== TRACE_TOOL_NAME) {
      tokens += countTextTokens(jsonText(part.input));
      if (part.state === "output-available") tokens += countTextTokens(jsonText(part.output));
      if (part.state === "output-error") tokens += countTextTokens(part.errorText);
    }
  }
  return tokens;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}
