import { getToolName, isToolUIPart, type UIMessage } from "ai";
import { COMPACTION_TRACE_TOOL_NAME } from "@/lib/message/ui-message";
import { contentText } from "../fixtures/fake-openai/request";
import { isSummaryRequest } from "../fixtures/fake-openai/summarizer";
import { countTextTokens } from "../fixtures/fake-openai/tokens";
import type { RecordedRequest } from "../fixtures/fake-openai/types";
import type { PlantedIdentifier } from "./sim-plan";

/**
 * What the `sim` benchmark reads off the fake server's recorded requests and the stored
 * history. Counts with the fake server's own o200k tokenizer. Of Fold it imports only the
 * trace's tool name (lib/message/ui-message.ts reads no environment), so it may load before
 * process.env is set.
 */

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
 * The planted identifiers `text` still carries: each exact planted string as a plain
 * substring. Deliberately none of Fold's own identifier matching, so the grade does not share
 * its definition with what it grades.
 */
export function identifiersIn(
  text: string,
  identifiers: readonly PlantedIdentifier[],
): PlantedIdentifier[] {
  return identifiers.filter((id) => text.includes(id.value));
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
    else if (isToolUIPart(part) && getToolName(part) !== COMPACTION_TRACE_TOOL_NAME) {
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
