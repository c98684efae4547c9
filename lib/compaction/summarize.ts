/**
 * Stage 2 (DESIGN §8, "The summarizer"): fold a span into the running summary
 * with a cascade of models. Each request is sized for the summarizer's own
 * window — a span too big for one call is folded chunk by chunk on message
 * boundaries. A summary is never thrown away for its shape: a reply cut at
 * the output limit keeps what it has; the sections it did not reach are asked for
 * again on their own, and only what that misses too keeps the previous summary's
 * text (or says "(not recorded)"). Only an empty or garbage reply, or a failure, moves on
 * to the next model; the caller owns the fallback (`SummarizerFailedError`).
 * The reference ledger is not the summarizer's job: Tier 1 adds it.
 */
import { APICallError } from "ai";
import { MESSAGE_OVERHEAD_TOKENS, type TokenEstimator } from "@/lib/context/tokens";
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { type ChunkItem, packChunk, splitIntoPieces, splitIntoSteps } from "./chunking";
import { ignoreMetrics, type MetricSink, type SummarizerModel } from "./ports";
import {
  completeHeadings,
  headingOf,
  headingSkeleton,
  keepingEarlier,
  missingHeadings,
  NOT_RECORDED,
  presentHeadings,
  renderSections,
  SUMMARY_HEADINGS,
  type SummaryHeading,
  summarizerCondensePrompt,
  summarizerInstructions,
  summarizerPrompt,
  summarizerSectionsPrompt,
  summarySections,
  withUnreachedLines,
} from "./prompts";
import { serializeMessage, serializeSteps } from "./serialize";

/** Headroom in the summarizer's window for tokenizer differences (DESIGN §7's reserveRatio). */
const WINDOW_RESERVE_RATIO = 0.05;
/** Shorter than this holds no summary worth keeping. */
const SUMMARY_MIN_CHARS = 20;
/**
 * Room to think a reasoning model gets beside the summary's own when its first reply thought
 * through the whole ceiling: at least this, and twice what it thought, as far as its window goes.
 */
const THINKING_ROOM_MIN_TOKENS = 4_096;
/** The model is asked for this share of its output limit, so a typical reply ends before the cut. */
const SUMMARY_ASK_SHARE = 0.85;
/**
 * The sections a cut reply did not reach are asked for again, in about their previous length
 * times this, plus this much room per section: they would otherwise say only what the previous
 * summary said, and lose what the span adds.
 */
const REFILL_GROWTH = 1.25;
const REFILL_ROOM_PER_SECTION = 60;
/** Below this the output limit cannot hold the headings with anything under them. */
const MIN_OUTPUT_TOKENS = 64;
/** A 400/413 halves the chunk at most this often per model; then the model has failed. */
const MAX_CHUNK_HALVINGS = 4;
/** A chunk smaller than this is not worth a call: the window is too small for the budget. */
const MIN_CHUNK_TOKENS = 64;
/** Instructions and prompt travel as two provider messages. */
const WIRE_MESSAGES = 2;

export type { SummarizerModel };

export type SummarizerOptions = {
  /** The cascade, tried in order. */
  models: SummarizerModel[];
  /** Per model call. */
  timeoutMs: number;
  estimator: TokenEstimator;
  now?: () => number;
  onMetric?: MetricSink;
};

export type SummarizeRequest = {
  /** The previous summary's narrative (its ledger is Tier 1's business). */
  previousSummary: string | null;
  /** The span to fold; serialized here, tool outputs cut to head and tail. */
  span: FoldUIMessage[];
  /** Tokens the narrative may take, completed headings included. */
  summaryBudget: number;
  signal?: AbortSignal;
};

export type SummarizeResult = {
  summary: string;
  /** The model that wrote the final fold. */
  model: string;
  /** Estimated tokens of span text actually sent, summed over chunks. */
  inputTokens: number;
  chunks: number;
  /** Model calls made, failed ones included. */
  attempts: number;
  /** Replies that stopped at the output limit and were kept as far as they went. */
  cutReplies: number;
  /** Cut replies whose missing sections were asked for again and filled in from that answer. */
  cutsRefilled: number;
};

export type Summarize = (request: SummarizeRequest) => Promise<SummarizeResult>;

export type SummarizerAttempt = { model: string; error: Error };

/** Every model in the cascade failed; the caller writes the fallback digest. */
export class SummarizerFailedError extends Error {
  readonly attempts: SummarizerAttempt[];

  constructor(attempts: SummarizerAttempt[]) {
    const detail = attempts.map((a) => `${a.model}: ${a.error.message}`).join("; ");
    super(`every summarizer model failed${detail ? ` (${detail})` : ""}`);
    this.name = "SummarizerFailedError";
    this.attempts = attempts;
  }
}

/** An answer Fold will not use as a summary. */
export class SummaryRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SummaryRejectedError";
  }
}

/** Progress shared by the cascade: chunks already folded stay folded when a later model takes over. */
type FoldProgress = {
  /** Index of the first span item not folded yet. */
  position: number;
  /** The summary so far: the previous summary with every folded chunk in it. */
  running: string | null;
  inputTokens: number;
  chunks: number;
};

/** One summarize() call's fixed inputs, shared by the steps below. */
type SummarizeRun = {
  options: SummarizerOptions;
  request: SummarizeRequest;
  instructions: string;
  /** The output limit of each call: the narrative budget less room for headings it may not reach. */
  limitTokens: number;
  countText: (text: string) => number;
  /** Model calls made so far, failed ones included. */
  calls: number;
  cutReplies: number;
  cutsRefilled: number;
};

export function createSummarizer(options: SummarizerOptions): Summarize {
  const now = options.now ?? Date.now;
  const onMetric = options.onMetric ?? ignoreMetrics;
  const instructions = summarizerInstructions();

  return async function summarize(request) {
    const startedAt = now();
    const countText = (text: string) => options.estimator.countText(text);
    const run: SummarizeRun = {
      options,
      request,
      instructions,
      limitTokens: Math.max(
        MIN_OUTPUT_TOKENS,
        request.summaryBudget - countText(headingSkeleton()),
      ),
      countText,
      calls: 0,
      cutReplies: 0,
      cutsRefilled: 0,
    };
    const items: ChunkItem[] = request.span.flatMap((message) => {
      const text = serializeMessage(message);
      if (text.length === 0) return [];
      const item: ChunkItem = { text, tokens: countText(text) };
      item.steps = () =>
        (serializeSteps(message) ?? []).map((step) => ({ text: step, tokens: countText(step) }));
      return [item];
    });
    const previousSummary = request.previousSummary?.trim() ? request.previousSummary : null;
    if (items.length === 0) {
      if (previousSummary === null) throw new RangeError("nothing to summarize: the span is empty");
      if (countText(previousSummary) <= request.summaryBudget) {
        return {
          summary: previousSummary,
          model: "",
          inputTokens: 0,
          chunks: 0,
          attempts: 0,
          cutReplies: 0,
          cutsRefilled: 0,
        };
      }
      // Nothing new to fold, but the summary is over the room it has now: shortened on its own.
      let condensed = previousSummary;
      const entry = await throughCascade(run, async (model) => {
        condensed = await condenseWithModel(run, model, previousSummary);
      });
      onMetric("summarize.latency_ms", { model: entry.id, ms: now() - startedAt, chunks: 1 });
      return {
        summary: condensed,
        model: entry.id,
        inputTokens: countText(previousSummary),
        chunks: 1,
        attempts: run.calls,
        cutReplies: run.cutReplies,
        cutsRefilled: 0,
      };
    }

    const progress: FoldProgress = {
      position: 0,
      running: previousSummary,
      inputTokens: 0,
      chunks: 0,
    };
    const entry = await throughCascade(run, (model) => foldWithModel(run, model, items, progress));
    onMetric("summarize.latency_ms", {
      model: entry.id,
      ms: now() - startedAt,
      chunks: progress.chunks,
    });
    return {
      summary: progress.running ?? "",
      model: entry.id,
      inputTokens: progress.inputTokens,
      chunks: progress.chunks,
      attempts: run.calls,
      cutReplies: run.cutReplies,
      cutsRefilled: run.cutsRefilled,
    };
  };
}

/**
 * Runs `attempt` with each model of the cascade in turn until one succeeds, and names it; a
 * failure moves on to the next model, the caller's abort ends it all.
 */
async function throughCascade(
  run: SummarizeRun,
  attempt: (entry: SummarizerModel) => Promise<void>,
): Promise<SummarizerModel> {
  const failures: SummarizerAttempt[] = [];
  for (const entry of run.options.models) {
    run.request.signal?.throwIfAborted();
    try {
      await attempt(entry);
      return entry;
    } catch (error) {
      if (run.request.signal?.aborted) throw error; // the turn is gone: no point asking the next model
      failures.push({ model: entry.id, error: asError(error) });
    }
  }
  throw new SummarizerFailedError(failures);
}

/**
 * The summary alone, shortened by one model to the narrative's budget. A reply still over the
 * budget is refused: the next model, and in the end the fallback digest (which always fits),
 * take over.
 */
async function condenseWithModel(
  run: SummarizeRun,
  entry: SummarizerModel,
  previous: string,
): Promise<string> {
  const { countText } = run;
  const prompt = summarizerCondensePrompt({
    previousSummary: previous,
    budgetTokens: askTokens(run),
    limitTokens: run.limitTokens,
    countTokens: countText,
  });
  const room = roomBeside(run, entry, prompt);
  if (room < 0) {
    throw new Error(
      `the summary does not fit a ${entry.contextWindow}-token window to be shortened (${-room} tokens over)`,
    );
  }
  const reply = await callModel(run, entry, prompt);
  const budget = run.request.summaryBudget;
  // A heading it left out or wrote "None." under keeps the previous text when that still fits;
  // else the reply stands as written (asked to shorten, it may drop what no longer matters).
  const completed = completeHeadings(reply.text, previous);
  if (countText(completed) <= budget) return completed;
  const asWritten = completeHeadings(reply.text);
  const tokens = countText(asWritten);
  if (tokens <= budget) return asWritten;
  throw new SummaryRejectedError(
    `the shortened summary is still over its budget (${tokens} > ${budget} tokens)`,
  );
}

/** Folds the rest of the span with one model; a 400/413 halves the chunk and retries. */
async function foldWithModel(
  run: SummarizeRun,
  entry: SummarizerModel,
  items: ChunkItem[],
  progress: FoldProgress,
): Promise<void> {
  let chunkLimit = Number.POSITIVE_INFINITY; // lowered by each 400/413
  let halvings = 0;
  while (progress.position < items.length) {
    const capacity = Math.min(chunkCapacity(run, entry, progress.running), chunkLimit);
    if (capacity < MIN_CHUNK_TOKENS) {
      throw new Error(
        `no room for the span in a ${entry.contextWindow}-token window (chunk capacity ${capacity} tokens)`,
      );
    }
    // A tool loop too big for a chunk is read step by step, and any other message in pieces:
    // not cut to its head and tail (the watermark passes it, so what is cut is gone).
    splitIntoSteps(items, progress.position, capacity);
    splitIntoPieces(items, progress.position, capacity, run.countText);
    const chunk = packChunk(items, progress.position, capacity, run.countText);
    try {
      progress.running = await foldChunk(run, entry, progress.running, chunk.text);
    } catch (error) {
      if (isRequestTooLarge(error) && halvings < MAX_CHUNK_HALVINGS) {
        halvings += 1;
        chunkLimit = Math.floor(run.countText(chunk.text) / 2);
        continue;
      }
      throw error;
    }
    progress.position = chunk.end;
    progress.chunks += 1;
    progress.inputTokens += run.countText(chunk.text);
  }
}

/** Span tokens one call to `entry` can carry next to the instructions, prompt and output. */
function chunkCapacity(run: SummarizeRun, entry: SummarizerModel, running: string | null): number {
  return roomBeside(
    run,
    entry,
    summarizerPrompt({
      previousSummary: running,
      spanText: "",
      budgetTokens: askTokens(run),
      limitTokens: run.limitTokens,
      countTokens: run.countText,
    }),
  );
}

/** Tokens `entry`'s window has left beside the instructions, `prompt`, the output and the reserve. */
function roomBeside(run: SummarizeRun, entry: SummarizerModel, prompt: string): number {
  const frame =
    run.countText(run.instructions) +
    run.countText(prompt) +
    WIRE_MESSAGES * MESSAGE_OVERHEAD_TOKENS;
  const reserve = Math.ceil(WINDOW_RESERVE_RATIO * entry.contextWindow) + frame;
  return entry.contextWindow - run.limitTokens - reserve;
}

/** Tokens the prompt asks for: a share of the limit, so a typical reply ends before the cut. */
function askTokens(run: SummarizeRun): number {
  return Math.floor(SUMMARY_ASK_SHARE * run.limitTokens);
}

/**
 * Folds one chunk into the running summary; a reply cut short is kept, the sections it did not
 * reach are asked for again, and what is still missing is completed from the previous summary.
 */
async function foldChunk(
  run: SummarizeRun,
  entry: SummarizerModel,
  running: string | null,
  spanText: string,
): Promise<string> {
  const { countText } = run;
  const prompt = summarizerPrompt({
    previousSummary: running,
    spanText,
    budgetTokens: askTokens(run),
    limitTokens: run.limitTokens,
    countTokens: countText,
  });
  const reply = await callModel(run, entry, prompt);
  const open = reply.cut ? unfinishedSections(reply.text) : [];
  const { summary, refilled } =
    open.length > 0
      ? await refillSections(run, entry, reply.text, running, spanText, open)
      : { summary: completeHeadings(reply.text, running), refilled: false };
  const inputTokens = countText(running ?? "") + countText(spanText);
  const summaryTokens = countText(summary);
  if (summaryTokens > Math.max(inputTokens, countText(headingSkeleton()))) {
    throw new SummaryRejectedError(
      `summary is longer than its input (${summaryTokens} > ${inputTokens} tokens)`,
    );
  }
  if (refilled) run.cutsRefilled += 1;
  return summary;
}

/**
 * The sections a cut reply left unfinished, in order: the one the cut fell in and those it never
 * reached. None when it reached every heading (only its last section's end is lost).
 */
function unfinishedSections(cutText: string): SummaryHeading[] {
  const missing = missingHeadings(cutText);
  if (missing.length === 0) return [];
  const cutIn = presentHeadings(cutText).at(-1);
  return SUMMARY_HEADINGS.filter((h) => h === cutIn || missing.includes(h));
}

/**
 * A cut reply, with the sections it left unfinished asked for again in a second call (the same
 * messages, those sections only, about their previous length, and the section the cut fell in at
 * least as long as the reply had written of it): what it wrote in full stays, and each unfinished
 * section takes the second answer's text — what the span adds to it, where the previous summary
 * alone would lose that — in order, as long as the summary stays within the narrative's budget
 * (or, when completing the cut reply from the previous summary takes more, within that plus what
 * the second call was asked for beyond the text it replaces) and never longer than its input. A
 * section left out, one the second answer does not have or cut short in its turn, and the one the
 * cut fell in when retold far shorter keep the cut reply's text or the previous summary's. A
 * second call that fails leaves the cut reply completed as before; a turn's abort goes through.
 */
async function refillSections(
  run: SummarizeRun,
  entry: SummarizerModel,
  cutText: string,
  running: string | null,
  spanText: string,
  open: readonly SummaryHeading[],
): Promise<{ summary: string; refilled: boolean }> {
  const { countText } = run;
  const written = summarySections(cutText);
  const previous = summarySections(running);
  const cutIn = presentHeadings(cutText).at(-1);
  // The section the cut fell in stopped anywhere: what the previous summary held there and the
  // reply did not reach yet stays, as far as the summary stays within its budget (or the
  // previous summary's size, when that was larger): never a summary that grows fold by fold.
  if (cutIn) {
    const room = Math.max(run.request.summaryBudget, countText(running ?? ""));
    const fits = (body: string) =>
      countText(
        renderSections((h) =>
          keepingEarlier(h, [h === cutIn ? body : written.get(h), previous.get(h)]),
        ),
      ) <= room;
    const reached = withUnreachedLines(cutIn, written.get(cutIn), previous.get(cutIn), fits);
    if (reached !== undefined) written.set(cutIn, reached);
  }
  const asIs = renderSections((h) => keepingEarlier(h, [written.get(h), previous.get(h)]));
  const tokensOf = (body: string | undefined) =>
    body && body !== NOT_RECORDED ? countText(body) : 0;
  // What completing the cut reply keeps in those sections, which their new text replaces; the
  // section the cut fell in is asked for at least as long as the reply had written of it.
  const replaced = open.reduce(
    (sum, h) => sum + (tokensOf(written.get(h)) || tokensOf(previous.get(h))),
    0,
  );
  const base = open.reduce(
    (sum, h) =>
      sum + Math.max(tokensOf(previous.get(h)), h === cutIn ? tokensOf(written.get(h)) : 0),
    0,
  );
  const asked = Math.min(
    askTokens(run),
    Math.ceil(REFILL_GROWTH * base) + REFILL_ROOM_PER_SECTION * open.length,
  );
  let reply: ModelReply;
  try {
    reply = await callModel(
      run,
      entry,
      summarizerSectionsPrompt({
        previousSummary: running,
        spanText,
        sections: open,
        budgetTokens: asked,
        limitTokens: run.limitTokens,
      }),
    );
  } catch (error) {
    if (run.request.signal?.aborted) throw error;
    return { summary: asIs, refilled: false };
  }
  // Only what it wrote under a heading: a line before the first is no section's.
  const fresh = summarySections(fromFirstHeading(reply.text));
  // A second answer cut in its turn: its last section may stop anywhere too.
  const freshCutIn = reply.cut ? presentHeadings(reply.text).at(-1) : undefined;
  // The summary may take what the second call was asked for in place of the text it replaces,
  // and never grows past its input (foldChunk refuses a summary longer than that).
  const cap = Math.min(
    Math.max(run.request.summaryBudget, countText(asIs) + Math.max(0, asked - replaced)),
    Math.max(countText(running ?? "") + countText(spanText), countText(headingSkeleton())),
  );
  const taken = new Set<SummaryHeading>();
  const render = () =>
    renderSections((h) =>
      keepingEarlier(h, [taken.has(h) ? fresh.get(h) : undefined, written.get(h), previous.get(h)]),
    );
  for (const heading of open) {
    const body = fresh.get(heading);
    if (!body || body === NOT_RECORDED || heading === freshCutIn) continue;
    // Far shorter than what the cut reply had written of it: a condensed retelling loses more
    // than the cut did.
    if (heading === cutIn && tokensOf(body) < tokensOf(written.get(heading)) / 2) continue;
    taken.add(heading);
    if (countText(render()) > cap) taken.delete(heading);
  }
  return taken.size > 0
    ? { summary: render(), refilled: true }
    : { summary: asIs, refilled: false };
}

/** `text` from its first summary heading on. */
function fromFirstHeading(text: string): string {
  const lines = text.split("\n");
  const first = lines.findIndex((line) => headingOf(line) !== null);
  return first > 0 ? lines.slice(first).join("\n") : text;
}

/** A summarizer's answer, cleaned, and whether it stopped at the output limit. */
type ModelReply = { text: string; cut: boolean };

/** One model call: timeout + the caller's signal, the output ceiling. */
async function callModel(
  run: SummarizeRun,
  entry: SummarizerModel,
  prompt: string,
): Promise<ModelReply> {
  const { request } = run;
  const { timeoutMs } = run.options;
  request.signal?.throwIfAborted();
  // Each call has its own time: a retry with room to think must not inherit what is left.
  const ask = async (thinkingRoom: number) => {
    run.calls += 1;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await entry.generate({
        instructions: run.instructions,
        prompt,
        maxOutputTokens: run.limitTokens + thinkingRoom,
        abortSignal: request.signal ? AbortSignal.any([timeout, request.signal]) : timeout,
      });
    } catch (error) {
      if (timeout.aborted && !request.signal?.aborted) {
        throw new Error(`timed out after ${timeoutMs} ms`, { cause: error });
      }
      throw error;
    }
  };
  let result = await ask(0);
  // A reasoning model (the chat's own, by default) spent the summary's ceiling thinking: once
  // more, with room to think beside the summary, as much as its window leaves.
  const thought = result.reasoningTokens ?? 0;
  let thinkingRoom = 0;
  if (result.finishReason === "length" && thought > 0) {
    thinkingRoom = Math.min(
      Math.max(THINKING_ROOM_MIN_TOKENS, 2 * thought),
      roomBeside(run, entry, prompt),
    );
    if (thinkingRoom > 0) result = await ask(thinkingRoom);
  }
  let cut = result.finishReason === "length";
  let written = result.text;
  // Given room to think, the call's ceiling is no longer the summary's: a summary written past
  // its own is cut there, at whole lines, as a cut reply is (and refilled like one).
  if (thinkingRoom > 0 && !cut && run.countText(written) > run.limitTokens) {
    written = linesWithin(written, run.limitTokens, run.countText);
    cut = true;
  }
  if (cut) run.cutReplies += 1;
  const text = cleanSummary(cut ? withoutPartialLine(written) : written);
  if (text.length < SUMMARY_MIN_CHARS) {
    throw new SummaryRejectedError(`summary is empty or too short (${text.length} chars)`);
  }
  if (presentHeadings(text).length === 0) {
    // Not a summary at all (the model answered the conversation, or wrote noise).
    throw new SummaryRejectedError("the reply has none of the summary's headings");
  }
  return { text, cut };
}

/** The first lines of `text` that fit `limitTokens`, and the start of the next (a partial line). */
function linesWithin(
  text: string,
  limitTokens: number,
  countText: (text: string) => number,
): string {
  const lines = text.split("\n");
  let used = 0;
  let kept = 0;
  while (kept < lines.length) {
    const cost = countText(`${lines[kept]}\n`);
    if (used + cost > limitTokens) break;
    used += cost;
    kept += 1;
  }
  // The line that did not fit stands for the part a cut reply ends with (withoutPartialLine).
  return lines.slice(0, kept + 1).join("\n");
}

/** A provider refusing the request's size (or shape): smaller chunks may pass. */
function isRequestTooLarge(error: unknown): boolean {
  return APICallError.isInstance(error) && (error.statusCode === 400 || error.statusCode === 413);
}

/** A reply cut at the output limit ends mid-line: that line may hold half an identifier. */
function withoutPartialLine(text: string): string {
  const lastBreak = text.lastIndexOf("\n");
  return lastBreak > 0 ? text.slice(0, lastBreak) : text;
}

/**
 * The model's text without a code fence around it or a preamble before the first heading: the
 * first of the summary's own headings (bold ones too) or a `#` heading before it, so that a
 * `# comment` in a snippet under a bold heading is not taken for one and everything above it cut.
 */
function cleanSummary(text: string): string {
  let out = text.trim();
  const fenced = /^```[\w-]*\n([\s\S]*?)(?:\n?```)?$/.exec(out);
  if (fenced) out = (fenced[1] ?? "").trim();
  const lines = out.split("\n");
  const own = lines.findIndex((line) => headingOf(line) !== null);
  const anyHeading = lines.findIndex((line) => /^#{1,6}\s/.test(line));
  // A `#` heading worded otherwise before the first recognised one is the summary's too.
  const found = [own, anyHeading].filter((index) => index >= 0);
  const first = found.length > 0 ? Math.min(...found) : 0;
  return first > 0 ? lines.slice(first).join("\n") : out;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
