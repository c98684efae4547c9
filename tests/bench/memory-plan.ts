import {
  assistantPhrase,
  CONSTRAINTS,
  competingIdentifier,
  FACT_KINDS,
  type Fact,
  factValue,
  intBetween,
  mentionPhrase,
  type Origin,
  type Random,
  userPhrase,
} from "./memory-facts";
import { createRandom, words } from "./sim-plan";

/**
 * The script of the `memory` benchmark: a deterministic conversation with a fetch_url call
 * every fifth turn, 40 planted facts (ten each in user text, assistant text, tool-call
 * arguments and tool results), half of the tool facts mentioned again by the user, and pages
 * full of competing identifiers. Loads no Fold module.
 */

export type MemoryTurn = {
  /** 0-based. */
  index: number;
  /** The user's message. */
  text: string;
  /** Path and query fetch_url is scripted to read this turn (on the page server), or null. */
  fetch: string | null;
  /** The scripted final reply of the turn (after the tool call, if any). */
  reply: string;
};

export type MemoryPlan = {
  turns: MemoryTurn[];
  facts: Fact[];
  /** Page server path → body (text/plain). */
  pages: Map<string, string>;
  /** Identifiers in the pages that are not facts. */
  competingIdentifiers: number;
};

/** Issue 10's length: enough chained compactions at 8,192 for memory to decay. */
export const MEMORY_TURNS = 300;
/** The spec asks for a tool call at least every 5 turns: turn 3, 8, 13, … fetch a page. */
const TOOL_EVERY_TURNS = 5;
const TOOL_TURN_OFFSET = 2;
/** Facts are planted between this turn and PLANT_END_SHARE of the chat… */
const PLANT_START_TURN = 4;
const PLANT_END_SHARE = 0.7;
/** …and mentioned again this share of the chat later, so the mentions are folded too. */
const MENTION_DELAY_SHARE = 0.1;
/** Competing identifiers per page: 60 pages hold more than the 2,000 the spec asks for. */
const PAGE_IDENTIFIERS = 36;
/** A filler paragraph after every this many identifier lines. */
const PARAGRAPH_EVERY_LINES = 6;
/** Message lengths in words, like a chat's: short questions to long paragraphs. */
const MIN_USER_WORDS = 10;
const MAX_USER_WORDS = 120;
const MIN_REPLY_WORDS = 15;
const MAX_REPLY_WORDS = 120;
/** Any fixed seed: the same conversation on every run. */
const SEED = 0x6e6d_0a10;

function sentence(random: Random, min: number, max: number): string {
  const text = words(random, intBetween(random, min, max)).join(" ");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function isToolTurn(index: number, turns: number): boolean {
  return index < turns - 1 && index % TOOL_EVERY_TURNS === TOOL_TURN_OFFSET;
}

/** Spreads `count` plants over the planting stretch, on distinct turns `accept` allows. */
function plantTurns(
  turns: number,
  count: number,
  offset: number,
  accept: (i: number) => boolean,
): number[] {
  const end = Math.floor(turns * PLANT_END_SHARE);
  const step = (end - PLANT_START_TURN) / count;
  const chosen: number[] = [];
  for (let k = 0; k < count; k++) {
    let turn = Math.floor(PLANT_START_TURN + offset * step + k * step);
    // One fact of an origin per turn: a turn fetches one URL.
    while (!accept(turn) || chosen.includes(turn)) turn += 1;
    chosen.push(turn);
  }
  return chosen;
}

function buildFacts(random: Random, turns: number): Fact[] {
  const quotes = [...CONSTRAINTS];
  const tool = (i: number) => isToolTurn(i, turns);
  const chat = (i: number) => !tool(i);
  const schedule: Record<Origin, number[]> = {
    user: plantTurns(turns, 10, 0, chat),
    assistant: plantTurns(turns, 10, 0.5, chat),
    tool_args: plantTurns(turns, 10, 0, tool),
    tool_results: plantTurns(turns, 10, 0.5, tool),
  };
  const mentionDelay = Math.floor(turns * MENTION_DELAY_SHARE);
  const facts: Fact[] = [];
  for (const origin of Object.keys(FACT_KINDS) as Origin[]) {
    for (const [k, kind] of FACT_KINDS[origin].entries()) {
      const plantedTurn = schedule[origin][k] as number;
      const isTool = origin === "tool_args" || origin === "tool_results";
      // Every other tool fact is mentioned again: half of each tool origin.
      const mentioned = isTool && k % 2 === 0;
      facts.push({
        origin,
        kind,
        value: factValue(random, kind, quotes),
        plantedTurn,
        mentionTurn: mentioned ? plantedTurn + mentionDelay : null,
      });
    }
  }
  return facts;
}

/** A page: identifier lines among filler paragraphs, with `planted` lines at random places. */
function pageBody(random: Random, planted: readonly string[]): { body: string; competing: number } {
  const lines = [sentence(random, 4, 8)];
  for (let i = 0; i < PAGE_IDENTIFIERS; i++) {
    lines.push(`${sentence(random, 3, 7).slice(0, -1)}: ${competingIdentifier(random)}.`);
    if ((i + 1) % PARAGRAPH_EVERY_LINES === 0) lines.push(sentence(random, 20, 40));
  }
  for (const line of planted) lines.splice(intBetween(random, 1, lines.length), 0, line);
  return { body: lines.join("\n"), competing: PAGE_IDENTIFIERS };
}

export function buildMemoryPlan(turns = MEMORY_TURNS): MemoryPlan {
  const random = createRandom(SEED);
  const facts = buildFacts(random, turns);
  const at = (origin: Origin, turn: number) =>
    facts.filter((f) => f.origin === origin && f.plantedTurn === turn);
  const mentionedAt = (turn: number) => facts.filter((f) => f.mentionTurn === turn);
  const pages = new Map<string, string>();
  let competingIdentifiers = 0;
  const plan: MemoryTurn[] = [];
  for (let index = 0; index < turns; index++) {
    let fetch: string | null = null;
    if (isToolTurn(index, turns)) {
      const arg = at("tool_args", index)[0];
      const path = arg?.kind === "path" ? arg.value : `/pages/${index + 1}.txt`;
      fetch = arg?.kind === "hash" ? `${path}?rev=${arg.value}` : path;
      const planted = at("tool_results", index).map((f) => `The value to keep is ${f.value}.`);
      const page = pageBody(random, planted);
      pages.set(path, page.body);
      competingIdentifiers += page.competing;
    }
    const ask = fetch ? "please fetch the next page and summarize it" : sentence(random, 4, 8);
    const body = [
      sentence(random, MIN_USER_WORDS, MAX_USER_WORDS),
      ...at("user", index).map(userPhrase),
      ...mentionedAt(index).map(mentionPhrase),
    ];
    const reply = [
      sentence(random, MIN_REPLY_WORDS, MAX_REPLY_WORDS),
      ...at("assistant", index).map(assistantPhrase),
    ];
    plan.push({
      index,
      text: `Turn ${index + 1}: ${ask.replace(/\.$/, "")}\n${body.join(" ")}`,
      fetch,
      reply: reply.join(" "),
    });
  }
  const built = { turns: plan, facts, pages, competingIdentifiers };
  checkPlan(built);
  return built;
}

function occurrences(text: string, value: string): number {
  let count = 0;
  for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + 1)) count++;
  return count;
}

/**
 * Each fact appears exactly where it was planted (and mentioned), never by accident in filler,
 * a page or another identifier: so a plain substring match means the fact itself was kept.
 */
function checkPlan(plan: MemoryPlan): void {
  const all = [
    ...plan.turns.flatMap((t) => [t.text, t.reply, t.fetch ?? ""]),
    ...plan.pages.values(),
  ].join("\n");
  for (const fact of plan.facts) {
    const expected = fact.mentionTurn === null ? 1 : 2;
    const found = occurrences(all, fact.value);
    if (found !== expected) {
      throw new Error(`memory plan: ${fact.value} occurs ${found} times, expected ${expected}`);
    }
    if (fact.mentionTurn !== null && fact.mentionTurn >= plan.turns.length - 1) {
      throw new Error(`memory plan: ${fact.value} is mentioned after the last turn`);
    }
  }
}
