import fc from "fast-check";

/**
 * Generated request inputs for the API fuzz (tests/helpers/fuzz-api.ts): hostile text (NUL,
 * lone surrogates, huge, odd Unicode), bodies shaped like what a route expects with one part
 * broken, arbitrary JSON, text that is not JSON and bytes that are not UTF-8.
 */

/** Placeholders resolved when a case runs, against the fixtures of that moment. */
export const TOKENS = {
  chat: "$chat",
  otherChat: "$otherChat",
  victim: "$victim",
  random: "$random",
  fresh: "$fresh",
  model: "$model",
} as const;

const ONE_CODE_UNIT = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "\u0000",
    "a\u0000b",
    "\ud800",
    "x\udfffy",
    "\udc00\ud800",
    "",
    " ",
    "\u200b",
    "\u202e",
    "🙂",
    "%00",
    "\\u0000",
    "__proto__",
    "constructor",
    "'; drop table chat; --",
    "demo:demo",
    "fake:fake-model",
    "truth:\u0000",
    "a:".padEnd(300, "b"),
  ),
  fc.string({ unit: ONE_CODE_UNIT, maxLength: 24 }),
  fc.string({ unit: "binary", maxLength: 24 }),
  fc.string({ maxLength: 24 }),
);

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  fc.integer(),
  fc.constantFrom(0, -1, -0, 1e308, 2 ** 53, 10_000_001, 0.5),
  fc.boolean(),
  fc.constant(null),
  fc.array(hostileString, { maxLength: 3 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 3 }),
  fc.jsonValue({ maxDepth: 2 }),
  fc.constant("x".repeat(120_000)),
);

/** A body a route would accept, with `$tokens` for fixtures; one part of it gets broken. */
export type Template = Record<string, unknown>;

/** Valid bodies for the routes Fold has today; a new route is fuzzed with generic bodies only. */
export const TEMPLATES: Record<string, Template> = {
  "POST /api/chats": { title: "Trip", modelId: TOKENS.model },
  "PATCH /api/chats/[id]": { title: "Renamed", modelId: TOKENS.model },
  "POST /api/chats/[id]/compact": { modelId: TOKENS.model },
  "POST /api/chats/[id]/branches": { messageId: TOKENS.fresh, position: 1 },
  "PUT /api/chats/[id]/memory": { summary: "## Goal & open requests\n- edited", version: 0 },
  "POST /api/chats/[id]/memory/notes": { note: "Budget: 300 euros.", version: 0 },
  "DELETE /api/chats/[id]/memory/notes": { note: "Budget: 300 euros.", version: 0 },
  "PUT /api/chats/[id]/pins": { messageId: TOKENS.fresh, pinned: true },
  "POST /api/chat": {
    trigger: "submit-message",
    chatId: TOKENS.chat,
    modelId: TOKENS.model,
    message: { id: TOKENS.fresh, role: "user", parts: [{ type: "text", text: "hello" }] },
  },
  "PUT /api/admin/models": {
    provider: "fake",
    model: "fake-model",
    contextWindow: 8192,
    maxOutputTokens: null,
  },
};

type Path = (string | number)[];

function pathsOf(value: unknown, prefix: Path = []): Path[] {
  if (value === null || typeof value !== "object") return [prefix];
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((item, i) => [i, item])
    : Object.entries(value);
  return [prefix, ...entries.flatMap(([key, item]) => pathsOf(item, [...prefix, key]))];
}

function setAt(value: unknown, path: Path, replacement: unknown, remove: boolean): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string | number, ...Path];
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<
    string | number,
    unknown
  >;
  if (rest.length === 0 && remove) delete copy[head];
  else copy[head] = setAt(copy[head], rest, replacement, remove);
  return copy;
}

/** The template with one node replaced by a hostile value, removed, or given an extra key. */
function mutated(template: Template): fc.Arbitrary<unknown> {
  const paths = pathsOf(template);
  return fc.oneof(
    fc
      .tuple(fc.constantFrom(...paths), hostileValue)
      .map(([path, value]) => setAt(template, path, value, false)),
    fc
      .constantFrom(...paths.filter((p) => p.length > 0))
      .map((p) => setAt(template, p, null, true)),
    fc.tuple(hostileString, hostileValue).map(([key, value]) => ({ ...template, [key]: value })),
  );
}

export type BodySpec =
  | { kind: "none" }
  | { kind: "json"; value: unknown }
  | { kind: "text"; text: string }
  | { kind: "bytes"; bytes: number[] };

/** What to send to one endpoint: mostly broken variants of its template, some valid, some junk. */
export function bodyFor(template: Template | undefined): fc.Arbitrary<BodySpec> {
  const json = (value: fc.Arbitrary<unknown>) =>
    value.map((v): BodySpec => ({ kind: "json", value: v }));
  const generic = [
    { weight: 2, arbitrary: json(fc.dictionary(hostileString, hostileValue, { maxKeys: 4 })) },
    { weight: 1, arbitrary: json(hostileValue) },
    {
      weight: 1,
      arbitrary: fc.string({ maxLength: 40 }).map((text): BodySpec => ({ kind: "text", text })),
    },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ minLength: 1, maxLength: 40 })
        .map((bytes): BodySpec => ({ kind: "bytes", bytes: [...bytes] })),
    },
    { weight: 1, arbitrary: fc.constant<BodySpec>({ kind: "none" }) },
  ];
  if (!template) return fc.oneof(...generic);
  return fc.oneof(
    { weight: 8, arbitrary: json(mutated(template)) },
    { weight: 1, arbitrary: fc.constant<BodySpec>({ kind: "json", value: template }) },
    ...generic,
  );
}

/** A path parameter: one of the fixtures (owned, someone else's, random) or hostile text. */
export function paramValue(name: string): fc.Arbitrary<string> {
  if (name === "...all") {
    return fc.constantFrom(
      "sign-in/email",
      "sign-up/email",
      "get-session",
      "sign-out",
      "update-user",
      "change-password",
      "no/such/endpoint",
    );
  }
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(TOKENS.chat, TOKENS.otherChat, TOKENS.victim, TOKENS.random),
    },
    { weight: 1, arbitrary: hostileString },
  );
}

/** Query parameters: the ones Fold reads, and anything else. */
export const queryParams: fc.Arbitrary<Record<string, string>> = fc.oneof(
  fc.constant({}),
  fc.record({ modelId: fc.oneof(fc.constant(TOKENS.model), hostileString) }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 2 }),
);
