import type { ToolSet } from "ai";
import { estimateOverhead, type Overhead } from "@/lib/context/overhead";
import { defaultEstimator } from "@/lib/context/tokens";
import { chatInstructions } from "./prompts";
import { type BuiltinTools, builtinTools, type RecallPort } from "./tools";

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
export async function chatRequestFrame(now: Date, tools?: ToolSet) {
  const instructions = chatInstructions(now);
  if (tools) {
    return {
      instructions,
      tools,
      ...(await estimateOverhead(defaultEstimator, instructions, tools)),
    };
  }
  return { instructions, tools: builtinTools(), ...(await builtinOverhead(instructions)) };
}

/**
 * A turn's frame: the built-in tools with `recall` bound to the turn's chat. The schemas are the
 * same as every request's, so their size is the one counted once.
 */
export async function chatTurnFrame(now: Date, recall: RecallPort): Promise<RequestFrame> {
  const instructions = chatInstructions(now);
  return {
    instructions,
    tools: builtinTools({ recall }),
    ...(await builtinOverhead(instructions)),
  };
}

/**
 * The size of a request's frame alone, without building its tools: what a check of a message
 * against the model's window needs before the turn goes on (run-turn.ts, admitMessage).
 */
export async function chatFrameOverhead(now: Date, tools?: ToolSet): Promise<Overhead> {
  const instructions = chatInstructions(now);
  return tools
    ? estimateOverhead(defaultEstimator, instructions, tools)
    : builtinOverhead(instructions);
}

/**
 * The built-in tools are the same in every request and the instructions change once a day,
 * so their size is counted once per instructions text, not on every turn.
 */
let lastBuiltin: { instructions: string; overhead: Promise<Overhead> } | undefined;

async function builtinOverhead(instructions: string): Promise<Overhead> {
  if (lastBuiltin?.instructions !== instructions) {
    const overhead = estimateOverhead(defaultEstimator, instructions, builtinTools());
    lastBuiltin = { instructions, overhead };
    // A failed count is not kept for the next turn.
    overhead.catch(() => {
      if (lastBuiltin?.overhead === overhead) lastBuiltin = undefined;
    });
  }
  const overhead = await lastBuiltin.overhead;
  // Callers add to their own copy of the classes, never to the kept one.
  return { ...overhead, overheadClasses: { ...overhead.overheadClasses } };
}
