import { getToolName, isToolUIPart } from "ai";
import {
  COMPACTION_TRACE_TOOL_NAME,
  type FoldUIMessage,
  isFinishedToolState,
} from "@/lib/message/ui-message";
import type { ToolCallState } from "./tool-call";

/** A tool part's state as the timeline shows it: a call left without a result once the reply ended was cancelled. */
export function toolCallState(state: string, streaming: boolean): ToolCallState {
  if (state === "output-available" || state === "output-error") return state;
  if (state === "output-denied") return "denied";
  if (!streaming) return "cancelled";
  return state === "input-streaming" ? "input-streaming" : "input-available";
}

/**
 * The reply got as far as text, a file (an image model's picture) or a finished tool call:
 * something Continue can go on from. (A
 * stopped reply is stored without the calls that had no result: lib/turn/persist.ts. Reasoning
 * alone is not: the next request gives the model none of it back, only an empty reply.)
 */
export function wroteSomething(message: FoldUIMessage): boolean {
  return message.parts.some((part) =>
    part.type === "text"
      ? part.text.trim() !== ""
      : part.type === "file" ||
        (isToolUIPart(part) &&
          getToolName(part) !== COMPACTION_TRACE_TOOL_NAME &&
          isFinishedToolState(part.state)),
  );
}

/**
 * Whether a streaming reply has begun to answer: text, a file, or a tool call (a compaction's
 * trace included). Until then the model is still thinking, reasoning shown or not (OpenAI's reasoning
 * models think without a word).
 */
export function answerBegun(message: FoldUIMessage): boolean {
  return message.parts.some((part) =>
    part.type === "text" ? part.text.trim() !== "" : part.type === "file" || isToolUIPart(part),
  );
}
