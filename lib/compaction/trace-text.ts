import type { TraceOutput } from "./trace";
import { NOTE_ADDED, NOTE_REMOVED } from "./user-notes";

/**
 * What a compaction entry says happened, in one plain sentence: the timeline's card
 * (components/chat/message/compaction-trace.tsx) and the Markdown export read it alike.
 */

/** One plain sentence per outcome: what happened to the chat, not what the code did. */
const OUTCOME_TEXT: Record<TraceOutput["outcome"], string> = {
  summarized: "Summarized older messages to make room",
  fallback:
    "Summarized older messages with a simpler digest, because the summarizer did not answer",
  trimmed: "The chat was too long for the model, so this request was shortened and sent again",
  skipped: "Nothing to summarize yet",
  conflict: "Another summary was written at the same moment; this chat uses that one",
  failed: "Older messages could not be summarized this time",
  stopped: "Stopped before older messages were summarized; the chat is as it was",
};

/** The user's own edit of the summary (the memory panel): no compaction ran. */
const EDITED_TITLE = "Summary edited by you";

/** A silent cut is not a compaction Fold ran: it says what the server did. */
const TRUNCATED_TITLE = "The server cut this conversation to fit its window";

/** A silent cut's detection: the compaction it causes next turn shows as a compaction. */
export function isTruncationNotice(output: Pick<TraceOutput, "reason" | "outcome">): boolean {
  return output.reason === "truncated" && output.outcome === "skipped";
}

/** The entry's title: a silent cut, the user's edit (a note added or taken away), or the outcome. */
export function traceTitle(output: Pick<TraceOutput, "reason" | "outcome" | "note">): string {
  if (isTruncationNotice(output)) return TRUNCATED_TITLE;
  if (output.reason === "edited") {
    if (output.note?.startsWith(NOTE_ADDED)) return "Note added by you";
    if (output.note?.startsWith(NOTE_REMOVED)) return "Note removed by you";
    return EDITED_TITLE;
  }
  return OUTCOME_TEXT[output.outcome];
}
