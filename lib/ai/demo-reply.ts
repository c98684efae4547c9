/**
 * The demo model's reply text (DESIGN §13): deterministic markdown that shows
 * what the model can see — it quotes the latest message, recalls an earlier one
 * or the summary, and reads out tool results when a tool was just called.
 */
import type { LanguageModelV4Prompt } from "@ai-sdk/provider";
import { answerFromToolResults, toolResultsSinceLatestUser } from "./demo-tools";

/** How a Fold summary is introduced in the prompt (DESIGN §8.1). */
const SUMMARY_OPEN_TAG = "<conversation-summary>";
const SUMMARY_CLOSE_TAG = "</conversation-summary>";
/** Quotes stay short so the reply stays readable whatever the user pasted. */
const QUOTE_MAX_WORDS = 12;
const QUOTE_MAX_CHARS = 90;
/** Longer "words" are pasted data (hashes, base64), not topics. */
const KEYWORD_MAX_CHARS = 24;
const KEYWORD_MIN_CHARS = 5;
const FALLBACK_KEYWORDS = ["your question", "the details", "the next step"];
const STOPWORDS = new Set(
  "about above after again being below could doing every first from have just maybe might more most other please really should since some still than thank thanks that their them then there these they thing think this those through under until very want what when where which while with would your yours".split(
    " ",
  ),
);

const OPENERS = [
  "Happy to help with that.",
  "Good question — let me work through it.",
  "Thanks for the message.",
  "Let's take a look.",
];
const INTROS = [
  "Here is how I would approach it:",
  "A few things stand out:",
  "My suggestion, in three steps:",
];
const ANGLES: Array<(k: string[]) => string[]> = [
  (k) => [
    `Start with **${k[0]}**: pin down what you already know and what is still open.`,
    `Then look at **${k[1]}** — small, concrete steps make progress easy to check.`,
    `Finally, tie it back to **${k[2]}** so the pieces fit together.`,
  ],
  (k) => [
    `**${k[0]}** is the heart of it, so I would begin there.`,
    `**${k[1]}** deserves a quick sanity check before going further.`,
    `**${k[2]}** is worth writing down now, so nothing gets lost later.`,
  ],
  (k) => [
    `Say the goal around **${k[0]}** in one sentence.`,
    `List the constraints that touch **${k[1]}**.`,
    `Pick one next step for **${k[2]}** and do just that.`,
  ],
];
const CLOSERS = [
  "_I am the offline demo model: my replies are templates, but the context handling around them is real._",
  "_Demo model (offline) — pick a real model for real answers; compaction works the same way._",
  "_This reply comes from the built-in demo model, so no API key was needed._",
];

type UserTurn = { text: string; isSummary: boolean };

/**
 * The reply to the prompt: read out the tool results that came back since the
 * latest user message, or else a 60–200 word markdown reply that quotes, counts
 * and recalls the conversation. `seed` varies the wording deterministically.
 */
export function composeReply(prompt: LanguageModelV4Prompt, seed: number): string {
  const results = toolResultsSinceLatestUser(prompt);
  if (results.length > 0) return answerFromToolResults(prompt, results);
  return conversationReply(prompt, seed);
}

function conversationReply(prompt: LanguageModelV4Prompt, seed: number): string {
  const userTurns: UserTurn[] = prompt.flatMap((message) => {
    if (message.role === "system") {
      return message.content.includes(SUMMARY_OPEN_TAG)
        ? [{ text: message.content, isSummary: true }]
        : [];
    }
    if (message.role !== "user") return [];
    const text = message.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(" ");
    return [{ text, isSummary: text.includes(SUMMARY_OPEN_TAG) }];
  });
  const turns = userTurns.filter((t) => !t.isSummary && t.text.trim());
  const summary = userTurns.find((t) => t.isSummary);
  const latest = turns.at(-1);
  const earlier = turns.length > 1 ? turns[0] : undefined;
  const pick = <T>(items: readonly T[], salt: number): T =>
    items[(seed + salt) % items.length] as T;

  const context: string[] = [];
  if (summary) {
    const recent =
      turns.length <= 1 ? "your latest message" : `the ${turns.length} most recent turns`;
    context.push(`I am working from a summary of earlier turns, plus ${recent} in full.`);
  } else if (turns.length <= 1) context.push("This is the first turn of our conversation.");
  else context.push(`This is turn ${turns.length} of our conversation.`);
  if (earlier)
    context.push(`Earlier you said “${quote(earlier.text)}”, and I am keeping that in mind.`);
  else if (summary) {
    const remembered = summaryLine(summary.text);
    if (remembered) context.push(`From that summary I remember: “${quote(remembered)}”.`);
  }

  const bullets = pick(ANGLES, 2)(topicWords(latest?.text ?? "")).map((line) => `- ${line}`);
  return [
    latest
      ? `${pick(OPENERS, 0)} You wrote: “${quote(latest.text)}”`
      : `${pick(OPENERS, 0)} I do not see a question yet.`,
    pick(INTROS, 1),
    bullets.join("\n"),
    context.join(" "),
    pick(CLOSERS, 3),
  ].join("\n\n");
}

/** The opening words of a message on one line, with "…" when cut. */
function quote(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  let short = line.split(" ").slice(0, QUOTE_MAX_WORDS).join(" ");
  if (short.length > QUOTE_MAX_CHARS) short = short.slice(0, QUOTE_MAX_CHARS).trimEnd();
  return short.length < line.length ? `${short}…` : short;
}

/** Up to three distinct topic words of the message, padded with generic ones. */
function topicWords(text: string): string[] {
  const found: string[] = [];
  for (const raw of text.toLowerCase().split(/[^\p{L}\p{N}_-]+/u)) {
    const word = raw.replace(/^[-_]+|[-_]+$/g, "");
    if (word.length < KEYWORD_MIN_CHARS || word.length > KEYWORD_MAX_CHARS) continue;
    if (STOPWORDS.has(word) || found.includes(word)) continue;
    found.push(word);
    if (found.length === 3) break;
  }
  for (const fallback of FALLBACK_KEYWORDS) if (found.length < 3) found.push(fallback);
  return found;
}

/** The first substantive line of a summary: what a user would recognize from before. */
function summaryLine(text: string): string | undefined {
  const start = text.indexOf(SUMMARY_OPEN_TAG);
  const end = text.indexOf(SUMMARY_CLOSE_TAG);
  const body = text.slice(start + SUMMARY_OPEN_TAG.length, end < 0 ? undefined : end);
  return body
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => line.replace(/^([-*+]|\d+[.)])\s+/, ""))
    .find((line) => line.split(/\s+/).length >= 3);
}
