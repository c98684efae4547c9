/**
 * Folding inside a live tool loop (DESIGN §9, §16): Tier 2's last resort when
 * cutting old tool results and arguments is not enough. The loop's earlier
 * steps after the latest user message become one note — each step's tool call
 * with its arguments cut short and the start of its result, then the exact
 * values those steps carried — and only the newest steps stay whole. The user
 * message is never touched. Deterministic and in memory: the next turn's
 * Tier 1 folds the stored turn into the durable summary.
 */

import { headOf } from "@/lib/message/unstorable-text";
import { identifiersInText } from "./identifiers";
import { cutMiddle, FOLDED_STEPS_MARKER } from "./trim";

export { FOLDED_STEPS_MARKER };

type AnyPart = { type: string; [key: string]: unknown };
type AnyMessage = { role: string; content: unknown };

const ARGUMENTS_MAX_CHARS = 160;
const RESULT_HEAD_CHARS = 100;

export type FoldStepsOptions<M> = {
  /** Raw tokens the messages must fit in. */
  limitTokens: number;
  /** Tokens the note may take. */
  noteTokens: number;
  estimate: (messages: M[]) => number;
  countText: (text: string) => number;
};

export type FoldStepsResult<M> = { messages: M[]; folded: number; before: number; after: number };

/** A step: one assistant message and the tool messages answering its calls. */
type Step = { start: number; end: number };

function partsOf(message: AnyMessage): AnyPart[] {
  return Array.isArray(message.content) ? (message.content as AnyPart[]) : [];
}

function stepsAfter<M extends AnyMessage>(messages: readonly M[], from: number): Step[] {
  const steps: Step[] = [];
  for (let i = from; i < messages.length; i++) {
    const role = messages[i]?.role;
    if (role === "tool" && steps.length > 0) (steps[steps.length - 1] as Step).end = i + 1;
    else steps.push({ start: i, end: i + 1 });
  }
  return steps;
}

function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (value && typeof value === "object" && "value" in value) return text(value.value);
  return JSON.stringify(value) ?? "";
}

const OLDER_STEPS = /^- \((\d+) older steps\)$/;
const VALUES_SEEN = "Values seen: ";

/**
 * One line per folded step, the texts whose identifiers the note keeps, and how many steps an
 * earlier note had already counted without a line.
 */
function describeSteps<M extends AnyMessage>(messages: readonly M[]) {
  const lines: string[] = [];
  const sources: string[] = [];
  let older = 0;
  const results = new Map<string, string>();
  // An earlier note folded again: its step lines are steps, its values values (kept first, as
  // the oldest), its count of older steps still counted.
  const readNote = (note: string) => {
    for (const line of note.split("\n").slice(1)) {
      const count = OLDER_STEPS.exec(line)?.[1];
      if (count !== undefined) older += Number(count);
      else if (line.startsWith(VALUES_SEEN)) sources.unshift(line.slice(VALUES_SEEN.length));
      else lines.push(line);
    }
  };
  for (const message of messages) {
    if (typeof message.content === "string") {
      if (message.content.startsWith(FOLDED_STEPS_MARKER)) readNote(message.content);
      else sources.push(message.content);
      continue;
    }
    for (const part of partsOf(message)) {
      if (part.type === "tool-result") results.set(String(part.toolCallId), text(part.output));
    }
  }
  for (const message of messages) {
    for (const part of partsOf(message)) {
      if (part.type === "text" && typeof part.text === "string") {
        if (part.text.startsWith(FOLDED_STEPS_MARKER)) {
          readNote(part.text);
          continue;
        }
        sources.push(part.text);
      }
      if (part.type !== "tool-call") continue;
      const args = text(part.input);
      const result = results.get(String(part.toolCallId)) ?? "";
      sources.push(args, result);
      const head = headOf(result.replace(/\s+/g, " ").trim(), RESULT_HEAD_CHARS);
      lines.push(
        `- ${String(part.toolName)} ${cutMiddle(args, ARGUMENTS_MAX_CHARS).replace(/\s+/g, " ")} → ${head || "(no output)"}${result.length > RESULT_HEAD_CHARS ? "…" : ""}`,
      );
    }
  }
  return { lines, sources, older };
}

/** The note: the newest step lines that fit, then the values the folded steps carried. */
function foldNote(
  { lines, sources, older }: ReturnType<typeof describeSteps>,
  options: FoldStepsOptions<unknown>,
): string {
  const { countText, noteTokens } = options;
  let used = countText(FOLDED_STEPS_MARKER);
  const kept: string[] = [];
  // Half the note for what the steps did (newest first), the rest for their exact values.
  for (let i = lines.length - 1; i >= 0; i--) {
    const cost = countText(`${lines[i]}\n`);
    if (used + cost > noteTokens / 2) break;
    kept.unshift(lines[i] as string);
    used += cost;
  }
  const untold = lines.length - kept.length + older;
  if (untold > 0) kept.unshift(`- (${untold} older steps)`);
  const values: string[] = [];
  const seen = new Set<string>();
  for (const source of sources) {
    for (const [value] of identifiersInText(source, false)) {
      if (seen.has(value)) continue;
      seen.add(value);
      const cost = countText(`${value}, `);
      if (used + cost > noteTokens) break;
      values.push(value);
      used += cost;
    }
  }
  const body = [FOLDED_STEPS_MARKER, ...kept];
  if (values.length > 0) body.push(`${VALUES_SEEN}${values.join(", ")}`);
  return body.join("\n");
}

/**
 * Folds the earliest steps after the latest user message into one note, so
 * that the messages fit `limitTokens` (the note counted at its full budget),
 * keeping at least the newest step.
 */
export function foldEarlierSteps<M extends AnyMessage>(
  messages: readonly M[],
  options: FoldStepsOptions<M>,
): FoldStepsResult<M> {
  const before = options.estimate([...messages]);
  const lastUser = messages.findLastIndex((m) => m.role === "user");
  const steps = stepsAfter(messages, lastUser + 1);
  const unchanged = { messages: [...messages], folded: 0, before, after: before };
  if (steps.length < 2) return unchanged;

  // Keep the newest steps that fit beside everything up to the user message and the note.
  let room =
    options.limitTokens - options.estimate(messages.slice(0, lastUser + 1)) - options.noteTokens;
  let firstKept = steps.length - 1;
  room -= options.estimate(messages.slice((steps[firstKept] as Step).start));
  while (firstKept > 0) {
    const step = steps[firstKept - 1] as Step;
    const cost = options.estimate(messages.slice(step.start, step.end));
    if (cost > room) break;
    room -= cost;
    firstKept -= 1;
  }
  if (firstKept === 0) return unchanged;

  const cut = (steps[firstKept] as Step).start;
  const note = foldNote(
    describeSteps(messages.slice(lastUser + 1, cut)),
    options as FoldStepsOptions<unknown>,
  );
  const next = [
    ...messages.slice(0, lastUser + 1),
    { role: "assistant", content: [{ type: "text", text: note }] } as unknown as M,
    ...messages.slice(cut),
  ];
  return { messages: next, folded: firstKept, before, after: options.estimate(next) };
}
