import { getToolName, isToolUIPart } from "ai";
import { COMPACTION_TRACE_TOOL_NAME } from "@/lib/message/ui-message";
import type { FoldUIMessage } from "./ui-message";

/**
 * A reply the window cut short is retried in the same message (DESIGN §10).
 * The marker separates the cut-short attempt from the answer: what came
 * before it is neither shown as the answer nor stored — only the timeline's
 * compaction traces are kept.
 */
export const RETRY_MARKER_TYPE = "data-fold-retry";

type Part = FoldUIMessage["parts"][number];

function isTrace(part: Part): boolean {
  return isToolUIPart(part) && getToolName(part) === COMPACTION_TRACE_TOOL_NAME;
}

/** The parts that make the answer: traces from any attempt, then the last attempt's parts. */
export function answerParts(parts: readonly Part[]): Part[] {
  const marker = parts.findLastIndex((p) => p.type === RETRY_MARKER_TYPE);
  if (marker < 0) return [...parts];
  return [
    ...parts.slice(0, marker).filter(isTrace),
    ...parts.slice(marker + 1).filter((p) => p.type !== RETRY_MARKER_TYPE),
  ];
}
