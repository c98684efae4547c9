import { getToolName, isToolUIPart } from "ai";
import { COMPACTION_TRACE_TOOL_NAME } from "@/lib/message/ui-message";
import type { FoldUIMessage } from "./ui-message";

/**
 * A reply the window cut short is retried in the same message (DESIGN §10).
 * The marker separates the cut-short step from the answer: the step the window
 * cut is neither shown as the answer nor stored. The tool steps the attempt
 * finished before it stay when the retry carried them to the model (so their
 * tools do not run again: the marker says `keepsSteps`), and so do the
 * timeline's compaction traces.
 */
export const RETRY_MARKER_TYPE = "data-fold-retry";

type Part = FoldUIMessage["parts"][number];

function isTrace(part: Part): boolean {
  return isToolUIPart(part) && getToolName(part) === COMPACTION_TRACE_TOOL_NAME;
}

/** Whether a retry marker says the retry carried the steps finished before the cut. */
function keepsSteps(part: Part | undefined): boolean {
  const data = (part as { data?: { keepsSteps?: unknown } } | undefined)?.data;
  return data?.keepsSteps === true;
}

/**
 * The parts that make the answer: the traces before the marker, and the steps finished before the
 * cut one when the retry carried them (each from its `step-start`, up to the step the window
 * cut), then the retry's parts.
 */
export function answerParts(parts: readonly Part[]): Part[] {
  const marker = parts.findLastIndex((p) => p.type === RETRY_MARKER_TYPE);
  if (marker < 0) return [...parts];
  const before = parts.slice(0, marker);
  const cutStep = before.findLastIndex((p) => p.type === "step-start");
  const firstStep = keepsSteps(parts[marker])
    ? before.findIndex((p) => p.type === "step-start")
    : -1;
  const finished = (p: Part, i: number) =>
    isTrace(p) || (firstStep >= 0 && i >= firstStep && i < cutStep);
  return [
    ...before.filter((p, i) => p.type !== RETRY_MARKER_TYPE && finished(p, i)),
    ...parts.slice(marker + 1).filter((p) => p.type !== RETRY_MARKER_TYPE),
  ];
}
