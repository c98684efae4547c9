import type { ToolSet } from "ai";
import { estimateOverhead, type Overhead } from "@/lib/context/overhead";
import { defaultEstimator } from "@/lib/context/tokens";
import { chatInstructions } from "./prompts";
import { type BuiltinTools, builtinTools } from "./tools";

/**
 * What every chat request carries besides its messages — the instructions and
 * the tool schemas — with their size counted once. The turn, compact-now and
 * the context ring all take it from here, so they cannot disagree.
 */
export type RequestFrame<TOOLS extends ToolSet = BuiltinTools> = Overhead & {
  instructions: string;
  tools: TOOLS;
};

export async function chatRequestFrame(now: Date): Promise<RequestFrame>;
export async function chatRequestFrame<TOOLS extends ToolSet>(
  now: Date,
  tools: TOOLS,
): Promise<RequestFrame<TOOLS>>;
export async function chatRequestFrame(now: Date, tools: ToolSet = builtinTools()) {
  const instructions = chatInstructions(now);
  return {
    instructions,
    tools,
    ...(await estimateOverhead(defaultEstimator, instructions, tools)),
  };
}
