import { asSchema, type ToolSet } from "ai";
import { addClassTokens, type ClassTokens, classTotal, emptyClassTokens } from "./content-class";
import type { TokenEstimator } from "./tokens";

/**
 * Framing a provider adds around the system prompt (class `systemFrame`) and each tool
 * definition (`frame`).
 */
export const SYSTEM_OVERHEAD_TOKENS = 4;
const TOOL_DEFINITION_OVERHEAD_TOKENS = 8;
/**
 * Framing every request carries once, whatever it holds (class `requestFrame`): the
 * begin-of-text token and the generation prompt that opens the reply
 * (`<|im_start|>assistant\n`, `\n\nAssistant:`…).
 */
export const REQUEST_OVERHEAD_TOKENS = 3;

// Instructions (they change once a day) and tool schemas rarely change: count each once.
const MEMO_MAX_ENTRIES = 64;
const memo = new Map<string, number>();

function memoCount(estimator: TokenEstimator, text: string): number {
  let tokens = memo.get(text);
  if (tokens === undefined) {
    tokens = estimator.countText(text);
    if (memo.size >= MEMO_MAX_ENTRIES) memo.clear();
    memo.set(text, tokens);
  }
  return tokens;
}

/**
 * A tool definition's tokens, by its input schema object (tools are rebuilt per request, their
 * schemas are not) and then by name and description: converting a schema to JSON Schema is
 * most of what counting the overhead costs, and it never changes.
 */
const definitionTokens = new WeakMap<object, Map<string, number>>();

async function toolDefinitionTokens(
  estimator: TokenEstimator,
  name: string,
  tool: ToolSet[string],
): Promise<number> {
  const schema: unknown = tool.inputSchema;
  const memoizable = typeof schema === "object" && schema !== null;
  const key = `${name}\n${tool.description ?? ""}`;
  let byTool = memoizable ? definitionTokens.get(schema) : undefined;
  const known = byTool?.get(key);
  if (known !== undefined) return known;
  const parameters = await asSchema(tool.inputSchema).jsonSchema;
  const definition = JSON.stringify({ name, description: tool.description ?? "", parameters });
  const tokens = memoCount(estimator, definition);
  if (!memoizable) return tokens;
  if (!byTool) {
    byTool = new Map();
    definitionTokens.set(schema, byTool);
  }
  byTool.set(key, tokens);
  return tokens;
}

export type Overhead = {
  /** Raw tokens of the instructions and the tool schemas together. */
  overheadTokens: number;
  /** Raw tokens of the tool schemas alone (sent beside a provider prompt, which holds the instructions). */
  toolOverheadTokens: number;
  /** `overheadTokens` by content class: instructions by their lines, schemas as JSON, framing apart. */
  overheadClasses: ClassTokens;
};

/**
 * Tokens of what every request carries besides the messages: the system
 * instructions and the tool schemas (DESIGN §7: it counts toward the trigger).
 */
export async function estimateOverhead(
  estimator: TokenEstimator,
  instructions: string,
  tools: ToolSet,
): Promise<Overhead> {
  const overheadClasses = emptyClassTokens();
  for (const [name, tool] of Object.entries(tools)) {
    overheadClasses.json += await toolDefinitionTokens(estimator, name, tool);
    overheadClasses.frame += TOOL_DEFINITION_OVERHEAD_TOKENS;
  }
  const toolOverheadTokens = overheadClasses.json + overheadClasses.frame;
  // The instructions by class (they may be in any language), memoized by the estimator.
  const instructionClasses = estimator.classTokens([
    { key: "instructions", units: [{ type: "text", text: instructions }], wireMessages: 0 },
  ]);
  addClassTokens(overheadClasses, instructionClasses);
  const systemFraming = instructions === "" ? 0 : SYSTEM_OVERHEAD_TOKENS;
  overheadClasses.systemFrame += systemFraming;
  overheadClasses.requestFrame += REQUEST_OVERHEAD_TOKENS;
  const instructionTokens =
    classTotal(instructionClasses) + systemFraming + REQUEST_OVERHEAD_TOKENS;
  return {
    overheadTokens: instructionTokens + toolOverheadTokens,
    toolOverheadTokens,
    overheadClasses,
  };
}
