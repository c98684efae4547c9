import { asSchema, type ModelMessage, type ToolResultPart, type ToolSet } from "ai";

/**
 * The estimator benchmark's conversations in the OpenAI wire format (mirrors
 * @ai-sdk/openai-compatible's message conversion), and the fake server's count of them.
 */

type WireToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
export type WireMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: WireToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

function toolOutputText(output: ToolResultPart["output"]): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    default:
      throw new Error(`corpus tool output of type ${output.type} is not supported`);
  }
}

export function toWire(messages: readonly ModelMessage[]): WireMessage[] {
  const wire: WireMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
        wire.push({ role: "system", content: message.content });
        break;
      case "user":
        if (typeof message.content !== "string") throw new Error("corpus user messages are text");
        wire.push({ role: "user", content: message.content });
        break;
      case "assistant": {
        if (typeof message.content === "string") {
          wire.push({ role: "assistant", content: message.content });
          break;
        }
        let text = "";
        const toolCalls: WireToolCall[] = [];
        for (const part of message.content) {
          if (part.type === "text") text += part.text;
          else if (part.type === "tool-call") {
            toolCalls.push({
              id: part.toolCallId,
              type: "function",
              function: { name: part.toolName, arguments: JSON.stringify(part.input) },
            });
          }
        }
        wire.push(
          toolCalls.length > 0
            ? { role: "assistant", content: text || null, tool_calls: toolCalls }
            : { role: "assistant", content: text },
        );
        break;
      }
      case "tool":
        for (const part of message.content) {
          if (part.type !== "tool-result") continue;
          wire.push({
            role: "tool",
            tool_call_id: part.toolCallId,
            content: toolOutputText(part.output),
          });
        }
        break;
    }
  }
  return wire;
}

/** Characters of everything the messages carry: text, tool names, arguments and results (UTF-16 units). */
export function charsOf(wire: readonly WireMessage[]): number {
  let chars = 0;
  for (const message of wire) {
    chars += message.content?.length ?? 0;
    if (message.role === "assistant") {
      for (const call of message.tool_calls ?? []) {
        chars += call.function.name.length + call.function.arguments.length;
      }
    }
  }
  return chars;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A tool definition as the OpenAI wire format carries it. */
export type WireTool = {
  type: "function";
  function: { name: string; description: string; parameters: unknown };
};

/** A tool set's definitions in the wire format (as @ai-sdk/openai-compatible sends them). */
export async function toWireTools(tools: ToolSet): Promise<WireTool[]> {
  const wire: WireTool[] = [];
  for (const [name, tool] of Object.entries(tools)) {
    const parameters = await asSchema(tool.inputSchema).jsonSchema;
    const description = typeof tool.description === "string" ? tool.description : "";
    wire.push({ type: "function", function: { name, description, parameters } });
  }
  return wire;
}

export async function realPromptTokens(
  url: string,
  model: string,
  messages: readonly WireMessage[],
  tools?: readonly WireTool[],
): Promise<number> {
  const response = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model,
      messages,
      ...(tools && tools.length > 0 ? { tools } : {}),
      stream: false,
      max_tokens: 16,
    }),
  });
  const body: unknown = await response.json();
  if (!response.ok)
    throw new Error(`fake server answered ${response.status}: ${JSON.stringify(body)}`);
  const usage = isRecord(body) ? body.usage : undefined;
  const tokens = isRecord(usage) ? usage.prompt_tokens : undefined;
  if (typeof tokens !== "number")
    throw new Error(`no usage.prompt_tokens in ${JSON.stringify(body)}`);
  return tokens;
}
