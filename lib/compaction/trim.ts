/**
 * In-memory trimming for Tier 2 and recovery (DESIGN §9, §10). Works on the
 * shape shared by the AI SDK's ModelMessages and the provider prompt: messages
 * with a role and string-or-parts content. It only shrinks content — a tool
 * call and its result are never removed, so they can never be separated.
 */
import { headOf, tailOf } from "@/lib/message/unstorable-text";

type AnyPart = { type: string; [key: string]: unknown };
type AnyMessage = { role: string; content: unknown };

/** Opens the conversation summary in the message that carries it (view.ts, summaryMessage). */
export const SUMMARY_OPEN_TAG = "<conversation-summary>";
/**
 * How Tier 2's note of a loop's folded steps starts (fold-steps.ts); a later fold of the same
 * loop extends the note instead of nesting it.
 */
export const FOLDED_STEPS_MARKER =
  "[Earlier steps of this turn, folded by Fold to fit the context window]";

/** Tool results shorter than this are not worth a placeholder. */
const ELIDE_MIN_CHARS = 400;
/** Per-part caps tried in turn once elision is not enough, in tokens (≈ 4 chars each). */
const CAP_LADDER_TOKENS = [2000, 1000, 500, 250, 120];
const CHARS_PER_TOKEN = 4;

/** What the user pinned, as the in-memory trims recognise it (lib/message/pins.ts, pinnedOf). */
export type Pinned = {
  /** The text of each pinned message (pinnedTextOf; a pinned reply's, step by step). */
  texts: ReadonlySet<string>;
  /** The tool calls a pinned reply made: their arguments and results are kept like its text. */
  toolCallIds: ReadonlySet<string>;
};

export type TrimOptions<M> = {
  /** Raw (uncalibrated) tokens the messages must fit in. */
  limitTokens: number;
  /** This many newest tool results are kept whole while elision is enough. */
  keepRecentToolResults: number;
  estimate: (messages: M[]) => number;
  /** Trim even if the estimate says the messages fit (the provider said otherwise). */
  force?: boolean;
  /**
   * What the user pinned: such a message, and the tool calls and results of a pinned reply, are
   * cut only when nothing fits without cutting them, as the summary is.
   */
  pinned?: Pinned;
  /**
   * Never cut the summary or a pinned message (a pinned reply's tool calls and results may still
   * be cut): the caller has another way to make room (Tier 2 folds the turn's earlier steps
   * first) and cuts them only after that.
   */
  keepSummary?: boolean;
};

/** A message's text, as Pinned.texts holds it: its text parts, joined. */
export function pinnedTextOf(message: AnyMessage): string {
  if (typeof message.content === "string") return message.content;
  return (partsOf(message) ?? [])
    .map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : ""))
    .join("");
}

export type TrimResult<M> = { messages: M[]; before: number; after: number; fits: boolean };

function partsOf(message: AnyMessage): AnyPart[] | null {
  return Array.isArray(message.content) ? (message.content as AnyPart[]) : null;
}

function outputText(output: unknown): string {
  if (output && typeof output === "object" && "value" in output) {
    const value = (output as { value: unknown }).value;
    return typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  }
  return typeof output === "string" ? output : (JSON.stringify(output) ?? "");
}

/** The key of a tool call's arguments once they were cut to head and tail (an object, as providers require). */
export const CUT_ARGUMENTS_KEY = "arguments_cut_to_fit";

/**
 * Arguments cut to about `maxChars` of their JSON, head and tail, once they
 * are longer than `minChars` (by default: whenever cutting saves something).
 */
export function cutArguments(input: unknown, maxChars: number, minChars = maxChars): unknown {
  if (input && typeof input === "object" && CUT_ARGUMENTS_KEY in input) {
    const cut = (input as Record<string, unknown>)[CUT_ARGUMENTS_KEY];
    if (typeof cut === "string" && cut.length <= maxChars + CUT_NOTE_CHARS) return input;
  }
  const json = typeof input === "string" ? input : (JSON.stringify(input) ?? "");
  if (json.length <= Math.max(minChars, maxChars + CUT_MARGIN_CHARS)) return input;
  return { [CUT_ARGUMENTS_KEY]: cutMiddle(json, maxChars) };
}

/** Room the "[… N chars cut …]" note takes inside a cut text. */
const CUT_NOTE_CHARS = 64;
/** Cutting fewer chars than this saves less than the note costs. */
const CUT_MARGIN_CHARS = 2 * CUT_NOTE_CHARS;

/**
 * Head and tail of a text, with how much was cut between them. A text only a
 * little over `maxChars` is left whole: the note would cost more than the cut saves.
 */
export function cutMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars + CUT_MARGIN_CHARS) return text;
  const half = Math.floor(maxChars / 2);
  // Between whole characters: half an emoji is text no provider takes (a lone surrogate).
  const head = headOf(text, half);
  const tail = tailOf(text, half);
  return `${head}\n[… ${(text.length - head.length - tail.length).toLocaleString("en-US")} chars cut to fit the context window …]\n${tail}`;
}

/** Positions (message, part) of every part of `type` (a tool call or a tool result), newest first. */
function partsOfType(
  messages: readonly AnyMessage[],
  type: "tool-call" | "tool-result",
): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const parts = partsOf(messages[i] as AnyMessage);
    if (!parts) continue;
    for (let j = parts.length - 1; j >= 0; j--) if (parts[j]?.type === type) found.push([i, j]);
  }
  return found;
}

function replacePart<M extends AnyMessage>(
  messages: M[],
  i: number,
  j: number,
  part: AnyPart,
): void {
  const message = messages[i] as M;
  const parts = [...(partsOf(message) ?? [])];
  parts[j] = part;
  messages[i] = { ...message, content: parts };
}

/**
 * Whether a part of message `i` is a tool call or result of a call in `calls`. Only those before
 * the latest user message (`lastUser`) count: a pinned reply is stored history, never the loop
 * now running, which keeps its own calls even where a provider repeats an id.
 */
function ofCall(
  part: AnyPart | undefined,
  calls: ReadonlySet<string> | undefined,
  i: number,
  lastUser: number,
): boolean {
  if (!calls || i >= lastUser || typeof part?.toolCallId !== "string") return false;
  return calls.has(part.toolCallId);
}

/**
 * Whether a reasoning part can go from an earlier step of the loop: it holds text (what it
 * costs), and it is not an OpenAI reasoning item, which must travel with its step's calls.
 * (Anthropic asks only for the last assistant message's thinking, unmodified, which stays.)
 */
function droppableReasoning(part: AnyPart): boolean {
  if (part.type !== "reasoning" || typeof part.text !== "string" || part.text === "") return false;
  const openai = (part.providerOptions as { openai?: { itemId?: unknown } } | undefined)?.openai;
  return openai?.itemId === undefined;
}

/**
 * The reasoning of the running loop's earlier steps, dropped (the model sent it back each step:
 * openai-compatible `reasoning_content`); the newest step keeps its own as written.
 */
function withoutEarlierReasoning<M extends AnyMessage>(messages: M[], lastUser: number): M[] {
  const newest = messages.findLastIndex((m) => m.role === "assistant");
  return messages.map((message, i) => {
    if (i <= lastUser || i >= newest || message.role !== "assistant") return message;
    const parts = partsOf(message);
    if (!parts?.some(droppableReasoning)) return message;
    return { ...message, content: parts.filter((part) => !droppableReasoning(part)) };
  });
}

/**
 * Older tool results become placeholders, and older arguments are cut like them; those of the
 * calls in `spared` (a pinned reply's) stay whole, and take none of the `keepRecent` places.
 * The loop's earlier steps lose their reasoning.
 */
function elide<M extends AnyMessage>(
  messages: M[],
  keepRecent: number,
  spared?: ReadonlySet<string>,
): M[] {
  const lastUser = messages.findLastIndex((m) => m.role === "user");
  const out = withoutEarlierReasoning(messages, lastUser);
  const unspared = (type: "tool-call" | "tool-result") =>
    partsOfType(out, type).filter(
      ([i, j]) => !ofCall(partsOf(out[i] as AnyMessage)?.[j], spared, i, lastUser),
    );
  for (const [index, [i, j]] of unspared("tool-call").entries()) {
    if (index < keepRecent) continue;
    const part = partsOf(out[i] as AnyMessage)?.[j];
    if (!part) continue;
    const input = cutArguments(part.input, ELIDE_MIN_CHARS);
    if (input !== part.input) replacePart(out, i, j, { ...part, input });
  }
  for (const [index, [i, j]] of unspared("tool-result").entries()) {
    if (index < keepRecent) continue;
    const part = partsOf(out[i] as AnyMessage)?.[j];
    if (!part) continue;
    const text = outputText(part.output);
    if (text.length < ELIDE_MIN_CHARS) continue;
    const toolName = typeof part.toolName === "string" ? part.toolName : "tool";
    const placeholder = `[tool result for ${toolName} omitted: ${text.length.toLocaleString("en-US")} chars; call the tool again if needed]`;
    replacePart(out, i, j, { ...part, output: { type: "text", value: placeholder } });
  }
  return out;
}

/** Tier 2's note of the loop steps it folded (fold-steps.ts). */
function foldNote(message: AnyMessage): boolean {
  if (message.role !== "assistant") return false;
  if (typeof message.content === "string") return message.content.startsWith(FOLDED_STEPS_MARKER);
  return (partsOf(message) ?? []).some(
    (part) =>
      part.type === "text" &&
      typeof part.text === "string" &&
      part.text.startsWith(FOLDED_STEPS_MARKER),
  );
}

/** Whether a message is the one that carries the conversation summary. */
function carriesSummary(message: AnyMessage): boolean {
  if (message.role !== "user") return false;
  if (typeof message.content === "string") return message.content.includes(SUMMARY_OPEN_TAG);
  return (partsOf(message) ?? []).some(
    (part) =>
      part.type === "text" && typeof part.text === "string" && part.text.includes(SUMMARY_OPEN_TAG),
  );
}

function capAll<M extends AnyMessage>(messages: M[], capChars: number, spare: Spare): M[] {
  const lastUser = messages.findLastIndex((m) => m.role === "user");
  const pinnedTexts = spare.pinned?.texts;
  const pinned = (message: M) =>
    (message.role === "user" || message.role === "assistant") &&
    pinnedTexts !== undefined &&
    pinnedTexts.size > 0 &&
    pinnedTexts.has(pinnedTextOf(message));
  // A pinned reply's tool results come in tool messages of their own: spared by their call.
  const sparedCalls = spare.summary ? spare.calls : undefined;
  return messages.map((message, i) => {
    if (i === lastUser || message.role === "system") return message;
    // The note of a loop's folded steps is that loop's memory, spared like the summary.
    if (spare.summary && (carriesSummary(message) || pinned(message) || foldNote(message)))
      return message;
    if (typeof message.content === "string") {
      return message.content.length > capChars
        ? { ...message, content: cutMiddle(message.content, capChars) }
        : message;
    }
    const parts = partsOf(message);
    if (!parts) return message;
    let changed = false;
    const next = parts.map((part) => {
      if (ofCall(part, sparedCalls, i, lastUser)) return part;
      if (part.type === "text" && typeof part.text === "string" && part.text.length > capChars) {
        changed = true;
        return { ...part, text: cutMiddle(part.text, capChars) };
      }
      if (part.type === "tool-result") {
        const text = outputText(part.output);
        if (text.length > capChars) {
          changed = true;
          return { ...part, output: { type: "text", value: cutMiddle(text, capChars) } };
        }
      }
      if (part.type === "tool-call") {
        const input = cutArguments(part.input, capChars);
        if (input !== part.input) {
          changed = true;
          return { ...part, input };
        }
      }
      return part;
    });
    return changed ? { ...message, content: next } : message;
  });
}

/** What a pass of trimToFit leaves whole: the summary and pinned messages, and which calls. */
type Spare = { summary: boolean; pinned?: Pinned; calls?: ReadonlySet<string> };

/**
 * The passes of trimToFit, keeping the most first: the summary, the pinned messages and a pinned
 * reply's tool calls and results; then the summary and the pinned messages (a pinned reply's tool
 * results are the bulky part of what was pinned, cut before its words); then nothing.
 */
function passes(options: { pinned?: Pinned; keepSummary?: boolean }): Spare[] {
  const { pinned } = options;
  const all: Spare[] = [{ summary: true, pinned, calls: pinned?.toolCallIds }];
  if (pinned && pinned.toolCallIds.size > 0) all.push({ summary: true, pinned });
  if (!options.keepSummary) all.push({ summary: false });
  return all;
}

/**
 * Elide older tool results to placeholders; if that is not enough, cut every
 * text and result (but the latest user message) to the largest cap that fits.
 * The summary is the memory of everything folded, and a pinned message what the
 * user asked to keep whole: they are cut only when nothing fits without cutting
 * them too (a pinned reply's tool calls and results just before them).
 */
export function trimToFit<M extends AnyMessage>(
  messages: readonly M[],
  options: TrimOptions<M>,
): TrimResult<M> {
  const before = options.estimate([...messages]);
  if (!options.force && before <= options.limitTokens) {
    return { messages: [...messages], before, after: before, fits: true };
  }
  let current: M[] = [];
  let after = before;
  for (const spare of passes(options)) {
    const elided = elide([...messages], options.keepRecentToolResults, spare.calls);
    current = elided;
    after = options.estimate(current);
    if (after <= options.limitTokens) return { messages: current, before, after, fits: true };
    for (const cap of CAP_LADDER_TOKENS) {
      current = capAll(elided, cap * CHARS_PER_TOKEN, spare);
      after = options.estimate(current);
      if (after <= options.limitTokens) return { messages: current, before, after, fits: true };
    }
  }
  return { messages: current, before, after, fits: false };
}
