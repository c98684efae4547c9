/**
 * The demo model's side of the tool loop (DESIGN §13): it calls one of Fold's
 * built-in tools when the latest user message plainly asks for what that tool
 * answers, and once a result is back it reads it out, so the loop can be seen
 * working without a key.
 */
import {
  isJSONObject,
  type JSONValue,
  type LanguageModelV4CallOptions,
  type LanguageModelV4Prompt,
  type LanguageModelV4ToolResultOutput,
  type LanguageModelV4ToolResultPart,
} from "@ai-sdk/provider";
import type { BuiltinToolName } from "@/lib/ai/tools";
import { headOf } from "@/lib/message/unstorable-text";

const FETCH_URL = "fetch_url" satisfies BuiltinToolName;
const CURRENT_TIME = "current_time" satisfies BuiltinToolName;
const RECALL = "recall" satisfies BuiltinToolName;
/** The first http(s) URL in a message; sentence punctuation after it is trimmed below. */
const URL_PATTERN = /\bhttps?:\/\/[^\s<>"'`]+/i;
const URL_TRAILING_PUNCTUATION = /[.,;:!?)\]}]+$/;
/** Questions only a clock answers; anything vaguer gets the ordinary reply. */
const TIME_QUESTION =
  /\bwhat(?:\s+is|['’]s)\s+the\s+time\b|\bwhat\s+time\b|\btoday['’]?s\s+date\b|\bwhat\s+day\s+is\s+it\b/i;
/** Asks for what the summary condensed: "recall the deploy key", "what did I say about Frankfurt?". */
const RECALL_ASKS = [
  /^\s*recall\b[\s:,-]+(.+?)[\s?.!]*$/is,
  /\bwhat did (?:i|we) (?:say|tell you|write) about\s+(.+?)[\s?.!]*$/is,
];
/** A recalled excerpt shown whole: it is cut around the match already. */
const RECALL_SHOWN_MATCHES = 2;
/** Enough of a fetched page to show the tool worked, short enough to read at a glance. */
const FETCH_EXCERPT_CHARS = 200;
const TOOL_CLOSER = "_Read from the tool result by the offline demo model._";

/** A tool call the demo model decided to make; `input` matches the tool's schema. */
export type DemoToolCall = { toolName: string; input: Record<string, string> };

type ToolChoiceOptions = Pick<LanguageModelV4CallOptions, "prompt" | "tools" | "toolChoice">;

/**
 * The tool call this turn should make, if any: only for the latest user
 * message, only for an offered tool, and never once a result is already back
 * (that is what ends the loop).
 */
export function planToolCall(call: ToolChoiceOptions): DemoToolCall | undefined {
  const latest = latestUserIndex(call.prompt);
  const message = call.prompt[latest];
  if (message?.role !== "user" || toolResultsSinceLatestUser(call.prompt).length > 0)
    return undefined;
  const text = message.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(" ");
  const url = text.match(URL_PATTERN)?.[0].replace(URL_TRAILING_PUNCTUATION, "");
  if (url && offers(call, FETCH_URL)) return { toolName: FETCH_URL, input: { url } };
  if (TIME_QUESTION.test(text) && offers(call, CURRENT_TIME))
    return { toolName: CURRENT_TIME, input: {} };
  const recalled = RECALL_ASKS.map((ask) => ask.exec(text)?.[1]).find(Boolean);
  if (recalled && offers(call, RECALL)) return { toolName: RECALL, input: { query: recalled } };
  return undefined;
}

/** Tool results that arrived after the latest user message: the answer to read out. */
export function toolResultsSinceLatestUser(
  prompt: LanguageModelV4Prompt,
): LanguageModelV4ToolResultPart[] {
  return prompt
    .slice(latestUserIndex(prompt) + 1)
    .flatMap((message) =>
      message.role === "tool"
        ? message.content.filter(
            (part): part is LanguageModelV4ToolResultPart => part.type === "tool-result",
          )
        : [],
    );
}

/** A short markdown answer that quotes what each tool returned, or how it failed. */
export function answerFromToolResults(
  prompt: LanguageModelV4Prompt,
  results: readonly LanguageModelV4ToolResultPart[],
): string {
  const answers = results.map((result) => {
    const output = readOutput(result.output);
    if (result.toolName === CURRENT_TIME) return timeAnswer(output);
    if (result.toolName === FETCH_URL) return fetchAnswer(output, requestedUrl(prompt, result));
    if (result.toolName === RECALL) return recallAnswer(output);
    return output.ok
      ? `The \`${result.toolName}\` tool returned: ${excerpt(asText(output.value))}`
      : `The \`${result.toolName}\` tool failed: ${output.message}`;
  });
  return [...answers, TOOL_CLOSER].join("\n\n");
}

function latestUserIndex(prompt: LanguageModelV4Prompt): number {
  return prompt.findLastIndex((message) => message.role === "user");
}

function offers(call: ToolChoiceOptions, toolName: string): boolean {
  const choice = call.toolChoice;
  if (choice?.type === "none") return false;
  if (choice?.type === "tool" && choice.toolName !== toolName) return false;
  return (call.tools ?? []).some((tool) => tool.type === "function" && tool.name === toolName);
}

type ReadOutput = { ok: true; value: JSONValue } | { ok: false; message: string };

/** A tool output as a value to quote, or as the failure to report. */
function readOutput(output: LanguageModelV4ToolResultOutput): ReadOutput {
  switch (output.type) {
    case "text":
    case "json":
      return { ok: true, value: output.value };
    case "content":
      return {
        ok: true,
        value: output.value.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n"),
      };
    case "error-text":
      return { ok: false, message: output.value };
    case "error-json":
      return { ok: false, message: asText(output.value) };
    case "execution-denied":
      return { ok: false, message: output.reason ?? "the call was not approved." };
  }
}

function timeAnswer(output: ReadOutput): string {
  if (!output.ok) return `I could not read the clock: ${output.message}`;
  const formatted = field(output.value, "formatted");
  const iso = field(output.value, "iso");
  if (!formatted && !iso) return `The clock says: ${excerpt(asText(output.value))}`;
  const zone = field(output.value, "timeZone");
  const named = zone && formatted && !formatted.includes(zone) ? ` (${zone})` : "";
  const when = formatted ? `It is **${formatted}**${named}.` : "";
  return [when, iso ? `In ISO 8601 that is \`${iso}\`.` : ""].filter(Boolean).join(" ");
}

function fetchAnswer(output: ReadOutput, url: string | undefined): string {
  const page = url ?? "the page";
  if (!output.ok) return `The fetch of ${page} failed: ${output.message}`;
  const finalUrl = field(output.value, "finalUrl") ?? page;
  const status = field(output.value, "status");
  const title = field(output.value, "title");
  const text = field(output.value, "text") ?? asText(output.value);
  const lines = [
    `I fetched ${finalUrl}${status ? ` (HTTP ${status})` : ""}.`,
    title ? `Its title is “${title.trim()}”.` : "It has no title.",
  ];
  return `${lines.join(" ")} It begins:\n\n> ${excerpt(text)}`;
}

function recallAnswer(output: ReadOutput): string {
  if (!output.ok) return `I could not search the earlier messages: ${output.message}`;
  const value = output.value;
  const matches = isJSONObject(value) && Array.isArray(value.matches) ? value.matches : [];
  const found = matches.slice(0, RECALL_SHOWN_MATCHES).flatMap((match) => {
    const message = field(match, "message");
    const quoted = field(match, "excerpt");
    if (!message || !quoted) return [];
    return [`From message ${message} (${field(match, "role") ?? "chat"}):\n\n> ${oneLine(quoted)}`];
  });
  if (found.length > 0) return found.join("\n\n");
  const text = field(value, "text");
  const message = field(value, "message");
  if (text && message) return `Message ${message} reads:\n\n> ${excerpt(text)}`;
  return field(value, "note") ?? `The earlier messages say: ${excerpt(asText(value))}`;
}

/** The URL the assistant asked for, from its own tool call. */
function requestedUrl(
  prompt: LanguageModelV4Prompt,
  result: LanguageModelV4ToolResultPart,
): string | undefined {
  for (const message of prompt) {
    if (message.role !== "assistant") continue;
    for (const part of message.content) {
      if (part.type !== "tool-call" || part.toolCallId !== result.toolCallId) continue;
      const input = part.input;
      if (typeof input === "object" && input !== null && "url" in input)
        return typeof input.url === "string" ? input.url : undefined;
    }
  }
  return undefined;
}

/** A string or number field of a JSON object result. */
function field(value: JSONValue, key: string): string | undefined {
  if (!isJSONObject(value)) return undefined;
  const found = value[key];
  return typeof found === "string" || typeof found === "number" ? String(found) : undefined;
}

function asText(value: JSONValue): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** The opening of a text on one line, with "…" when cut (never mid surrogate pair). */
function excerpt(text: string): string {
  const line = oneLine(text);
  if (line.length <= FETCH_EXCERPT_CHARS) return line;
  return `${headOf(line, FETCH_EXCERPT_CHARS).trimEnd()}…`;
}
