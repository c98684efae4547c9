/**
 * The estimator benchmark's corpus: conversations written as AI SDK ModelMessages (what a
 * step sends), so the same data feeds Fold's estimator and the OpenAI wire format.
 */
import type { JSONValue, ModelMessage } from "ai";

export type Category =
  | "prose"
  | "code"
  | "tool-json"
  | "chinese"
  | "japanese"
  | "russian"
  | "arabic"
  | "hindi"
  | "emoji"
  | "mixed";

export type Conversation = {
  name: string;
  category: Category;
  messages: ModelMessage[];
};

export function system(text: string): ModelMessage {
  return { role: "system", content: text };
}

export function user(text: string): ModelMessage {
  return { role: "user", content: text };
}

export function assistant(text: string): ModelMessage {
  return { role: "assistant", content: [{ type: "text", text }] };
}

export type CallSpec = { id: string; name: string; input: Record<string, JSONValue> };

/** An assistant step that calls tools, optionally saying something first. */
export function calls(specs: readonly CallSpec[], text?: string): ModelMessage {
  return {
    role: "assistant",
    content: [
      ...(text ? [{ type: "text" as const, text }] : []),
      ...specs.map((s) => ({
        type: "tool-call" as const,
        toolCallId: s.id,
        toolName: s.name,
        input: s.input,
      })),
    ],
  };
}

export type ResultSpec = { id: string; name: string; output: JSONValue | string };

/** The `tool` message answering a step: a string result goes as text, anything else as JSON. */
export function results(specs: readonly ResultSpec[]): ModelMessage {
  return {
    role: "tool",
    content: specs.map((s) => ({
      type: "tool-result" as const,
      toolCallId: s.id,
      toolName: s.name,
      output:
        typeof s.output === "string"
          ? { type: "text" as const, value: s.output }
          : { type: "json" as const, value: s.output },
    })),
  };
}

/** One tool call and its result, as two messages. */
export function toolRound(
  id: string,
  name: string,
  input: Record<string, JSONValue>,
  output: JSONValue | string,
  text?: string,
): ModelMessage[] {
  return [calls([{ id, name, input }], text), results([{ id, name, output }])];
}
