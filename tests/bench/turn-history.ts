import type { MessageStats } from "@/lib/message/stats";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { CORPUS } from "./corpus";

/**
 * Long chats for the `turn` benchmark (turn.ts): a stored history of user and assistant
 * messages from the corpus, every reply with the stats a real turn stores, and a summary
 * under Fold's own headings.
 */

/** Bullets per summary heading: a summary of ~1,000 tokens. */
const SUMMARY_LINES_PER_HEADING = 4;
const SUMMARY_LINE_CHARS = 160;

/** Texts to fill a long chat with, taken from the corpus. */
function corpusTexts(): { user: string[]; assistant: string[] } {
  const user: string[] = [];
  const assistant: string[] = [];
  for (const conversation of CORPUS) {
    for (const message of conversation.messages) {
      if (message.role === "user" && typeof message.content === "string") {
        if (message.content.length < 2_000) user.push(message.content);
      } else if (message.role === "assistant" && typeof message.content !== "string") {
        const text = message.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
        if (text) assistant.push(text);
      }
    }
  }
  return { user, assistant };
}

export function statsFor(input: {
  model: string;
  contextTokens: number;
  outputTokens: number;
  at: number;
  viewVersion: number;
}): MessageStats {
  return {
    model: input.model,
    inputTokens: input.contextTokens,
    outputTokens: input.outputTokens,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    contextTokens: input.contextTokens,
    lastStepOutputTokens: input.outputTokens,
    steps: 1,
    viewVersion: input.viewVersion,
    startedAt: input.at,
    firstTokenAt: input.at + 300,
    finishedAt: input.at + 2_000,
    finishReason: "stop",
  };
}

/**
 * `count` messages, user and assistant alternating from a user message, every reply with stats
 * of an earlier compaction version; every tenth reply used a tool first. Message ids are unique
 * across the database, so each chat's carry `idPrefix`.
 */
export function buildHistory(
  count: number,
  olderVersion: number,
  idPrefix: string,
  modelId: string,
): FoldUIMessage[] {
  const texts = corpusTexts();
  const messages: FoldUIMessage[] = [];
  let context = 0;
  for (let i = 0; i < count; i++) {
    const turn = Math.floor(i / 2);
    if (i % 2 === 0) {
      const text = texts.user[turn % texts.user.length] ?? "";
      context += Math.ceil(text.length / 4) + 4;
      messages.push({ id: `${idPrefix}-${i}`, role: "user", parts: [{ type: "text", text }] });
      continue;
    }
    const text = texts.assistant[turn % texts.assistant.length] ?? "";
    const output = Math.ceil(text.length / 4);
    const parts: FoldUIMessage["parts"] = [{ type: "step-start" }];
    if (turn % 10 === 0) {
      parts.push(
        {
          type: "dynamic-tool",
          toolName: "web_search",
          toolCallId: `call-${i}`,
          state: "output-available",
          input: { query: `turn ${turn}`, max_results: 3 },
          output: { results: [{ title: `Result ${turn}`, url: `https://example.com/${turn}` }] },
        },
        { type: "step-start" },
      );
    }
    parts.push({ type: "text", text });
    messages.push({
      id: `${idPrefix}-${i}`,
      role: "assistant",
      parts,
      metadata: {
        stats: statsFor({
          model: modelId,
          contextTokens: context,
          outputTokens: output,
          at: 1_750_000_000_000 + i * 60_000,
          viewVersion: olderVersion,
        }),
      },
    });
    context += output + 4;
  }
  return messages;
}

/** A summary under Fold's own headings, filled with corpus lines. */
export function summaryText(headings: readonly string[]): string {
  const lines = corpusTexts().user.map((t) => t.replace(/\s+/g, " ").slice(0, SUMMARY_LINE_CHARS));
  return headings
    .map((heading, h) => {
      const bullets = Array.from(
        { length: SUMMARY_LINES_PER_HEADING },
        (_, i) => `- ${lines[(h * SUMMARY_LINES_PER_HEADING + i) % lines.length]}`,
      );
      return `## ${heading}\n${bullets.join("\n")}`;
    })
    .join("\n\n");
}
