import type { ModelMessage } from "ai";
import {
  BASH_BACKUP,
  C_RING,
  GO_SERVER,
  PY_LRU,
  RUST_WORDS,
  SQL_REPORT,
  TS_DEBOUNCE,
} from "./code";
import {
  ARABIC_TEXT,
  CHINESE_TEXT,
  HINDI_TEXT,
  JAPANESE_TEXT,
  MULTILINGUAL,
  RUSSIAN_TEXT,
} from "./multilingual";
import { HELPFUL_SYSTEM, PARAGRAPHS } from "./prose";
import { TOOLS } from "./tools";
import { assistant, type Conversation, system, user } from "./types";

/** Long conversations, composed from the shorter material so each stays realistic. */

const QUESTIONS: readonly string[] = [
  "Can you expand on that a little?",
  "Interesting — what's the most common misconception about it?",
  "How would you explain that to a twelve-year-old?",
  "Is there a good book on this you'd recommend?",
  "Could you summarise what we've covered so far in a few bullet points?",
  "What would change if we looked at it from the opposite side?",
];

function longProse(): ModelMessage[] {
  const messages: ModelMessage[] = [system(HELPFUL_SYSTEM)];
  for (let turn = 0; turn < 30; turn++) {
    messages.push(user(QUESTIONS[turn % QUESTIONS.length] ?? ""));
    const a = PARAGRAPHS[turn % PARAGRAPHS.length] ?? "";
    const b = PARAGRAPHS[(turn * 3 + 1) % PARAGRAPHS.length] ?? "";
    messages.push(assistant(`${a}\n\n${b}`));
  }
  return messages;
}

function longCodeReview(): ModelMessage[] {
  const snippets: ReadonlyArray<readonly [string, string]> = [
    ["ts", TS_DEBOUNCE],
    ["python", PY_LRU],
    ["rust", RUST_WORDS],
    ["go", GO_SERVER],
    ["sql", SQL_REPORT],
    ["bash", BASH_BACKUP],
    ["c", C_RING],
  ];
  const messages: ModelMessage[] = [
    system("You are a meticulous code reviewer. Point out bugs first, then style."),
  ];
  for (let round = 0; round < 3; round++) {
    for (const [lang, code] of snippets) {
      messages.push(
        user(`Next file (${lang}), round ${round + 1}:\n\n\`\`\`${lang}\n${code}\n\`\`\``),
      );
      messages.push(
        assistant(
          `No blocking bugs in this ${lang} file. Style: the names are clear and the control flow is easy to follow. Consider adding a unit test for the edge case where the input is empty, and document the one non-obvious invariant at the top of the file.`,
        ),
      );
    }
  }
  return messages;
}

function longAgentSession(): ModelMessage[] {
  const rounds = TOOLS.flatMap((c) => c.messages.filter((m) => m.role !== "system"));
  return [
    system("You are an operations agent. Use tools freely; keep answers short."),
    ...rounds,
    ...rounds,
    user("Thanks. Write a one-paragraph summary of everything you found today."),
  ];
}

function longMultilingual(): ModelMessage[] {
  const texts = [CHINESE_TEXT, JAPANESE_TEXT, RUSSIAN_TEXT, ARABIC_TEXT, HINDI_TEXT];
  const messages: ModelMessage[] = [];
  for (let turn = 0; turn < 4; turn++) {
    for (const conversation of MULTILINGUAL) {
      if (conversation.category === "mixed") continue;
      messages.push(...conversation.messages.filter((m) => m.role !== "system"));
    }
    messages.push(user(texts.join("\n\n")));
    messages.push(assistant(texts.slice().reverse().join("\n\n")));
  }
  return messages;
}

function pastedDocument(): ModelMessage[] {
  const document = Array.from({ length: 8 }, (_, i) =>
    PARAGRAPHS.map((p, j) => `§${i + 1}.${j + 1} ${p}`).join("\n\n"),
  ).join("\n\n");
  return [
    user(`Please proofread this document and list any factual errors you find.\n\n${document}`),
  ];
}

export const LONG: readonly Conversation[] = [
  { name: "long-prose-30-turns", category: "prose", messages: longProse() },
  { name: "long-code-review", category: "code", messages: longCodeReview() },
  { name: "long-agent-session", category: "tool-json", messages: longAgentSession() },
  { name: "long-multilingual", category: "mixed", messages: longMultilingual() },
  { name: "long-pasted-document", category: "prose", messages: pastedDocument() },
];
