import { getToolName, isToolUIPart } from "ai";
import { isFoldedOutcome } from "@/lib/compaction/trace";
import { answerParts } from "./retry-marker";
import { COMPACTION_TRACE_TOOL_NAME, type FoldUIMessage, isFinishedToolState } from "./ui-message";

type Part = FoldUIMessage["parts"][number];

/**
 * What the chat keeps of a reply the user stopped (or Fold stopped between two steps), one rule
 * for the server, which stores it (lib/turn/persist.ts), and for the page, which shows the same
 * once the reply's stream ends, so that a reload changes nothing:
 * - `reply`: it wrote something (text, reasoning, a file, a finished tool call): stored as far
 *   as it got, marked Stopped, without the tool calls cut off before their result (they could
 *   not be sent to a model again);
 * - `fold`: it wrote nothing, but Tier 1 folded the chat before the stop (the trace says the
 *   summary was stored): that trace is kept as the fold's own timeline entry, as a background
 *   fold's is, and the message stays unanswered;
 * - `nothing`: the message stays unanswered (No reply, with Retry). A compaction stopped
 *   before it folded anything is no part of the chat.
 */
export type StoppedKeeps =
  | { kind: "reply"; parts: Part[] }
  | { kind: "fold"; parts: Part[] }
  | { kind: "nothing" };

export function keptOfStopped(parts: readonly Part[]): StoppedKeeps {
  const settled = settledParts(answerParts(parts));
  if (settled.some(isWritten)) return { kind: "reply", parts: settled };
  const folds = settled.filter(isStoredFold);
  return folds.length > 0 ? { kind: "fold", parts: folds } : { kind: "nothing" };
}

/** A fold's timeline entry, made of the trace a stopped reply held: not a reply, never sent to the model. */
export function foldEntry(id: string, parts: Part[]) {
  return { id, role: "assistant" as const, parts, metadata: { compaction: true } };
}

function isTrace(part: Part): boolean {
  return isToolUIPart(part) && getToolName(part) === COMPACTION_TRACE_TOOL_NAME;
}

function isStoredFold(part: Part): boolean {
  if (!isTrace(part)) return false;
  const output = (part as { output?: { outcome?: string } }).output;
  return isFoldedOutcome(output?.outcome);
}

/** Something of an answer: text, reasoning, a file or a tool call (a compaction's trace is none). */
function isWritten(part: Part): boolean {
  if (part.type === "text" || part.type === "reasoning") return part.text.trim() !== "";
  if (part.type === "file") return true;
  return isToolUIPart(part) && !isTrace(part);
}

/**
 * The parts a stopped reply keeps: only the tool calls that finished. One cut off before its
 * result could not be sent to a model again.
 */
function settledParts(parts: Part[]): Part[] {
  return parts.filter(
    (part) => !isToolUIPart(part) || isFinishedToolState((part as { state?: string }).state),
  );
}
