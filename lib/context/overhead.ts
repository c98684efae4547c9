import { asSchema, type ToolSet } from "ai";
import type { TokenEstimator } from "./tokens";

/** Framing a provider adds around the system prompt and each tool definition. */
const SYSTEM_OVERHEAD_TOKENS = 4;
const TOOL_DEFINITION_OVERHEAD_TOKENS = 8;

// Tool schemas rarely change: count each definition once per process.
const definitionTokens = new Map<string, number>();

/**
 * Tokens of what every request carries besides the messages: the system
 * instructions and the tool schemas (DESIGN §7: it counts toward the trigger).
 */
export async function estimateOverhead(
  estimator: TokenEstimator,
  instructions: string,
  tools: ToolSet,
): Promise<number> {
  let total = estimator.countText(instructions) + SYSTEM_OVERHEAD_TOKENS;
  for (const [name, tool] of Object.entries(tools)) {
    const parameters = await asSchema(tool.inputSchema).jsonSchema;
    const definition = JSON.stringify({ name, description: tool.description ?? "", parameters });
    let tokens = definitionTokens.get(definition);
    if (tokens === undefined) {
      tokens = estimator.countText(definition);
      definitionTokens.set(definition, tokens);
    }
    total += tokens + TOOL_DEFINITION_OVERHEAD_TOKENS;
  }
  return total;
}
