/**
 * The script of the `sim` benchmark: a deterministic 1,000-turn conversation. Every turn's
 * user text, reply length, fetched page and planted identifier comes from a seeded PRNG, so
 * two runs send exactly the same conversation. Loads no Fold module.
 */

export type PageKind = "html" | "text";

export type PageSpec = {
  /** Path on the local page server, e.g. `/pages/17.html`. */
  path: string;
  kind: PageKind;
  /** Size of the served body in bytes (approximately; words are not split). */
  bytes: number;
  seed: number;
};

export type IdentifierKind = "url" | "path" | "hash" | "quantity" | "quote";

export type PlantedIdentifier = {
  kind: IdentifierKind;
  /** What must reach the model verbatim (a quote without its quotation marks). */
  value: string;
  /** How it is written in the user's message. */
  phrase: string;
};

export type TurnPlan = {
  /** 0-based. */
  index: number;
  text: string;
  words: number;
  /** The fake server's default reply is padded or cut to this many tokens. */
  replyTokens: number;
  /** Set on the turns where the model calls fetch_url. */
  page: PageSpec | null;
  identifier: PlantedIdentifier | null;
};

export const SIM_TURNS = 1_000;
export const MIN_WORDS = 10;
export const MAX_WORDS = 400;
export const MIN_REPLY_TOKENS = 20;
export const MAX_REPLY_TOKENS = 300;
export const MIN_PAGE_BYTES = 200;
export const MAX_PAGE_BYTES = 40_000;
/** About one turn in six calls fetch_url. */
export const FETCH_SHARE = 1 / 6;
/** The first identifier's turn; then one every IDENTIFIER_SPACING turns. */
const FIRST_IDENTIFIER_TURN = 16;
const IDENTIFIER_SPACING = 33;
/** Identifiers sit this many words into a message: past the summary's 80-char goal line. */
const IDENTIFIER_WORD_OFFSET = 24;
const SEED = 0x5eed_f01d;

/** mulberry32: small, fast and good enough to vary lengths. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function intBetween(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** Log-uniform: short values are common, long ones still happen. */
function logUniform(random: () => number, min: number, max: number): number {
  return Math.round(Math.exp(Math.log(min) + random() * (Math.log(max) - Math.log(min))));
}

/** Lowercase words only: no digits, so filler never looks like a hash, path or quantity. */
const VOCABULARY = (
  "the a an and or but if then because while when where which who what how why this that these those " +
  "context window summary budget token turn model history compaction watermark message reply user assistant " +
  "server client database query index table column schema migration request response stream chunk buffer " +
  "page document article section heading paragraph list item link title author date version release " +
  "build test deploy config setting option default value limit error warning failure retry timeout " +
  "cache memory disk network socket thread process worker queue job task schedule event handler " +
  "please could would should might must can will need want think know understand explain describe " +
  "compare summarize review check verify confirm update change improve fix add remove rename move " +
  "quick slow large small long short new old first last next previous current recent early late " +
  "good better best simple clear careful exact rough stable flaky noisy quiet safe risky cheap costly"
).split(" ");

export function words(random: () => number, count: number): string[] {
  return Array.from(
    { length: count },
    () => VOCABULARY[Math.floor(random() * VOCABULARY.length)] as string,
  );
}

/** The 30 identifiers, six of each kind, planted in order. */
export const IDENTIFIERS: readonly PlantedIdentifier[] = [
  ...[
    "https://example.org/docs/v2/item-17",
    "https://git.example.com/fold/issues/4821",
    "https://status.example.net/incidents/2024-03-11",
    "https://example.org/api/v3/compaction?chat=88&view=full",
    "https://cdn.example.com/assets/build-5512/app.js",
    "https://wiki.example.org/Team/Oncall_Rotation",
  ].map((value) => ({ kind: "url" as const, value, phrase: value })),
  ...[
    "/srv/fold/data/run-17.log",
    "/etc/fold/config.toml",
    "~/projects/fold/src/index.ts",
    "./scripts/migrate-v3.sh",
    "/var/log/nginx/access-2024.log",
    "/opt/models/o200k/vocab.bpe",
  ].map((value) => ({ kind: "path" as const, value, phrase: value })),
  ...[
    "9f2c1e7a4b3d",
    "3e1d0c9b8a7f6e5d",
    "7c4a8d09ca3762af61e59520943dc26494f8941b",
    "0d5e2f8b91c4",
    "e3b0c44298fc1c14",
    "b1946ac92492d2347c6235b4d2611184",
  ].map((value) => ({ kind: "hash" as const, value, phrase: value })),
  ...["512 MB", "30 s", "250 ms", "16 GiB", "4096 tokens", "120 req/s"].map((value) => ({
    kind: "quantity" as const,
    value,
    phrase: value,
  })),
  ...[
    "never use tabs",
    "always answer in British English",
    "keep functions under forty lines",
    "do not touch the billing module",
    "prefer Postgres over MySQL",
    "no emojis in commit messages",
  ].map((value) => ({ kind: "quote" as const, value, phrase: `"${value}"` })),
];

const LEAD_INS: Record<IdentifierKind, string> = {
  url: "the reference I mean is",
  path: "the file in question is",
  hash: "the commit to look at is",
  quantity: "the limit we agreed is",
  quote: "one rule for everything here:",
};

/** Interleaves the kinds so every stretch of the conversation plants a mix. */
function identifierOrder(): PlantedIdentifier[] {
  const byKind = ["url", "path", "hash", "quantity", "quote"].map((kind) =>
    IDENTIFIERS.filter((id) => id.kind === kind),
  );
  const order: PlantedIdentifier[] = [];
  for (let i = 0; i < 6; i++) for (const group of byKind) order.push(group[i] as PlantedIdentifier);
  return order;
}

export function identifierTurn(k: number): number {
  return FIRST_IDENTIFIER_TURN + k * IDENTIFIER_SPACING;
}

export function buildPlan(turns = SIM_TURNS): TurnPlan[] {
  const random = createRandom(SEED);
  const planted = new Map(identifierOrder().map((id, k) => [identifierTurn(k), id]));
  const plan: TurnPlan[] = [];
  for (let index = 0; index < turns; index++) {
    const identifier = planted.get(index) ?? null;
    let count = logUniform(random, MIN_WORDS, MAX_WORDS);
    if (identifier) count = Math.max(count, IDENTIFIER_WORD_OFFSET + 16);
    const replyTokens = intBetween(random, MIN_REPLY_TOKENS, MAX_REPLY_TOKENS);
    // The last turn is the probe for identifiers: plain text, no tool.
    const fetches = index < turns - 1 && random() < FETCH_SHARE;
    const page: PageSpec | null = fetches
      ? (() => {
          const kind: PageKind = random() < 0.5 ? "html" : "text";
          return {
            path: `/pages/${index + 1}.${kind === "html" ? "html" : "txt"}`,
            kind,
            bytes: logUniform(random, MIN_PAGE_BYTES, MAX_PAGE_BYTES),
            seed: Math.floor(random() * 2 ** 31),
          };
        })()
      : null;
    const body = words(random, count);
    if (identifier) {
      body.splice(IDENTIFIER_WORD_OFFSET, 0, LEAD_INS[identifier.kind], identifier.phrase, "and");
    }
    const ask = page ? "Please fetch the page we discussed and tell me what it says. " : "";
    plan.push({
      index,
      text: `Turn ${index + 1}: ${ask}${body.join(" ")}.`,
      words: count,
      replyTokens,
      page,
      identifier,
    });
  }
  return plan;
}

function paragraph(random: () => number, count: number): string {
  const text = words(random, count).join(" ");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** A page of about `spec.bytes` bytes: HTML with the usual chrome, or plain text. */
export function pageBody(spec: PageSpec): string {
  const random = createRandom(spec.seed);
  const parts: string[] = [];
  let size = 0;
  const push = (text: string) => {
    parts.push(text);
    size += Buffer.byteLength(text) + 1;
  };
  if (spec.kind === "html") {
    push(`<!doctype html><html><head><meta charset="utf-8"><title>${paragraph(random, 5)}</title>`);
    push(`<style>body{font-family:sans-serif;max-width:40rem}</style></head><body>`);
    push(`<nav><a href="/">home</a> <a href="/docs">docs</a> <a href="/blog">blog</a></nav>`);
    push(`<h1>${paragraph(random, 6)}</h1>`);
    const closing = `<footer>${paragraph(random, 8)}</footer><script>console.log("ready")</script></body></html>`;
    const limit = spec.bytes - Buffer.byteLength(closing);
    let section = 0;
    while (size < limit) {
      if (section++ % 4 === 0) push(`<h2>${paragraph(random, 4)}</h2>`);
      push(`<p>${paragraph(random, intBetween(random, 8, 60))}</p>`);
    }
    push(closing);
  } else {
    push(paragraph(random, 6));
    while (size < spec.bytes) push(paragraph(random, intBetween(random, 8, 60)));
  }
  const body = parts.join("\n");
  // Never more than asked: a 200-byte page stays 200 bytes.
  return Buffer.byteLength(body) > spec.bytes && spec.kind === "text"
    ? body.slice(0, spec.bytes)
    : body;
}
