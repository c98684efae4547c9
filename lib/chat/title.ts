import { graphemeHeadOf } from "@/lib/message/unstorable-text";

const TITLE_TARGET_CHARS = 60;

/**
 * A chat's title from its first message: the first line, cut on a word
 * boundary. Deterministic and free — no extra model call that could fail or
 * cost tokens before the user has seen an answer. Null when the message has
 * nothing to name it by ("---"): the chat keeps its placeholder until that
 * message is edited into one that has, or the user names the chat.
 */
export function titleFromMessage(text: string): string | null {
  const firstLine = text.split("\n").find((line) => line.trim()) ?? "";
  const clean = firstLine
    .replace(/\s+/g, " ")
    .replace(/^[#>*\-\s]+/, "")
    .trim();
  if (!clean) return null;
  if (clean.length <= TITLE_TARGET_CHARS) return clean;
  const cut = graphemeHeadOf(clean, TITLE_TARGET_CHARS);
  const lastSpace = cut.lastIndexOf(" ");
  return `${(lastSpace > TITLE_TARGET_CHARS / 2 ? cut.slice(0, lastSpace) : cut).replace(/[,.;:!?-]+$/, "")}…`;
}
