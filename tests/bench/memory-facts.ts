import { words } from "./sim-plan";

/**
 * The identifiers of the `memory` benchmark: the planted facts it scores, and the competing
 * identifiers that fill its tool output. Both come from seeded generators, so every run plants
 * the same strings. Loads no Fold module.
 */

export type Random = () => number;

/** Where a fact first appears in the conversation. */
export type Origin = "user" | "assistant" | "tool_args" | "tool_results";

export type FactKind = "url" | "path" | "hash" | "quantity" | "quote";

export type Fact = {
  origin: Origin;
  kind: FactKind;
  /** What must reach the model verbatim (a quoted constraint without its quotation marks). */
  value: string;
  /** 0-based turn that plants it. */
  plantedTurn: number;
  /** 0-based turn where the user mentions it again, or null. */
  mentionTurn: number | null;
};

/** Kinds planted per origin, in planting order (each origin gets ten facts). */
export const FACT_KINDS: Record<Origin, readonly FactKind[]> = {
  user: ["url", "quote", "path", "hash", "quantity", "url", "quote", "path", "hash", "quantity"],
  assistant: ["url", "path", "hash", "quantity", "url", "path", "hash", "quantity", "url", "path"],
  // Planted in the fetch_url `url` argument: the URL's path, or a hash in its query.
  tool_args: ["path", "hash", "path", "hash", "path", "hash", "path", "hash", "path", "hash"],
  tool_results: [
    "url",
    "hash",
    "quantity",
    "path",
    "url",
    "hash",
    "quantity",
    "path",
    "url",
    "hash",
  ],
};

/** The user's quoted constraints: words outside the filler vocabulary, so only planted once. */
export const CONSTRAINTS = ["never use tabs", "always pin exact versions in lockfiles"];

/** Parts of generated identifiers: names that look like a team's infrastructure. */
const HOSTS = ["docs", "wiki", "status", "cdn", "git", "api", "blog", "mirror", "ci", "grafana"];
const TLDS = ["org", "com", "net", "io", "dev"];
const ROOTS = ["srv", "etc", "var/log", "opt", "home/ops", "usr/local/share"];
const EXTENSIONS = ["log", "toml", "yaml", "json", "ts", "sh", "md", "conf"];
const UNITS = ["ms", "s", "MB", "GiB", "tokens", "req/s", "KB", "min"];
/** Abbreviated git ids to short digests: long enough never to collide by chance. */
const HASH_MIN_CHARS = 10;
const HASH_MAX_CHARS = 16;

export function intBetween(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function hex(random: Random, chars: number): string {
  let out = "";
  for (let i = 0; i < chars; i++) out += "0123456789abcdef"[Math.floor(random() * 16)];
  return out;
}

/** A word of the filler vocabulary (lowercase letters only). */
function word(random: Random): string {
  return words(random, 1)[0] as string;
}

/** Hex with at least one digit and one letter: what every hash matcher accepts as a hash. */
function hashValue(random: Random): string {
  for (;;) {
    const value = hex(random, intBetween(random, HASH_MIN_CHARS, HASH_MAX_CHARS));
    if (/\d/.test(value) && /[a-f]/.test(value)) return value;
  }
}

function urlValue(random: Random): string {
  return `https://${pick(random, HOSTS)}-${hex(random, 4)}.example.${pick(random, TLDS)}/${word(random)}/${word(random)}-${intBetween(random, 1, 9999)}`;
}

function pathValue(random: Random): string {
  return `/${pick(random, ROOTS)}/${word(random)}/${word(random)}-${hex(random, 4)}.${pick(random, EXTENSIONS)}`;
}

/** Competing quantities are whole numbers; planted ones have a decimal ("4.8 ms"), so neither contains the other. */
function wholeQuantity(random: Random): string {
  return `${intBetween(random, 2, 4096)} ${pick(random, UNITS)}`;
}

function decimalQuantity(random: Random): string {
  return `${intBetween(random, 1, 999)}.${intBetween(random, 1, 9)} ${pick(random, UNITS)}`;
}

/** One competing identifier of a random kind, as tool output is full of them. */
export function competingIdentifier(random: Random): string {
  const roll = random();
  if (roll < 0.35) return urlValue(random);
  if (roll < 0.6) return pathValue(random);
  if (roll < 0.85) return hashValue(random);
  return wholeQuantity(random);
}

/** A fact's value of `kind`; `quote` takes the next constraint. */
export function factValue(random: Random, kind: FactKind, quotes: string[]): string {
  switch (kind) {
    case "url":
      return urlValue(random);
    case "path":
      return pathValue(random);
    case "hash":
      return hashValue(random);
    case "quantity":
      return decimalQuantity(random);
    case "quote": {
      const quote = quotes.shift();
      if (quote === undefined) throw new Error("memory: more quoted facts than constraints");
      return quote;
    }
  }
}

/** How the user writes a fact of theirs into a message. */
export function userPhrase(fact: Fact): string {
  switch (fact.kind) {
    case "url":
      return `The reference I mean is ${fact.value} and nothing else.`;
    case "path":
      return `The file in question is ${fact.value} on the build host.`;
    case "hash":
      return `The commit to look at is ${fact.value} on main.`;
    case "quantity":
      return `The budget we agreed on is ${fact.value} at most.`;
    case "quote":
      return `Constraint: "${fact.value}".`;
  }
}

/** How the scripted assistant states a fact of its own. */
export function assistantPhrase(fact: Fact): string {
  switch (fact.kind) {
    case "url":
      return `I checked it: the relevant page is ${fact.value} for this.`;
    case "path":
      return `I found the setting in ${fact.value} and left it unchanged.`;
    case "hash":
      return `The change landed as commit ${fact.value} yesterday.`;
    default:
      return `I measured it at ${fact.value} on the second run.`;
  }
}

/** How the user brings back a tool fact later. */
export function mentionPhrase(fact: Fact): string {
  return `Remember ${fact.value} from that earlier page, we will need it again.`;
}
