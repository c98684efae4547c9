/**
 * What the demo model's summary is made of (DESIGN §13): the summarizer's
 * `<conversation>` read back into blocks, and the pieces worth keeping found
 * in them with simple patterns — requests, the user's constraints, the last
 * conclusion, numeric facts, identifiers and tool errors. Always verbatim,
 * never paraphrased: the demo model cannot understand, only copy.
 */

/** A role block of the serialized span (lib/compaction/serialize.ts). */
export type SpanBlock = {
  role: "user" | "assistant" | "system";
  /** The block's text without its tool elements. */
  prose: string;
  tools: ToolElement[];
};

export type ToolElement = { kind: "call" | "result" | "error"; name: string; body: string };

/** Goals and conclusions are cut here: enough to recognise, not a pasted page. */
const LINE_MAX_CHARS = 240;
/** Longer "sentences" are pasted text, not a constraint someone wrote. */
const CONSTRAINT_MAX_CHARS = 300;
/** A fact is a short statement; longer ones are explanations. */
const FACT_MAX_CHARS = 200;
/** Longer identifiers are blobs (signed URLs, data), not references worth their tokens. */
const ARTIFACT_MAX_CHARS = 200;
const QUOTE_MIN_CHARS = 3;

const BLOCK_PATTERN = /<(user|assistant|system)>\n([\s\S]*?)\n<\/\1>/g;
const TOOL_PATTERN = /<tool-(call|result|error) name="([^"]*)">([\s\S]*?)<\/tool-\1>/g;
/** Words that make a user's sentence a constraint or preference. */
const CONSTRAINT_WORDS =
  /\b(?:must(?:n['’]t)?|never|always|only|exactly|don['’]t|do not|can['’]t|cannot|should(?:n['’]t)?|avoid|prefer(?:s|red)?|at most|at least|no more than|make sure|I (?:want|need))\b/i;
const QUOTE_PATTERN = /"([^"\n]+)"|“([^”\n]+)”/g;
const SENTENCE_END = /(?<=[.!?])\s+(?=[A-Z0-9"“(`])/;
/** Whole-line asides in italics (the demo's own sign-off) are not conclusions. */
const ASIDE_LINE = /^([_*]).*\1$/;

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"'`)\]]+/g;
/** ./x, ~/x, /a/b, /a.ext, or a relative path ending in a file extension (not "and/or"). */
const PATH_PATTERN =
  /(?<![\w/.:-])(?:(?:~|\.{1,2})\/[\w.@-]+(?:\/[\w.@-]+)*|\/[\w.@-]+(?:\/[\w.@-]+)+|\/[\w@-]+\.\w+|[\w.@-]+(?:\/[\w.@-]+)+\.[A-Za-z]\w*)/g;
const HASH_PATTERN =
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b/g;
const QUANTITY_PATTERN =
  /[$€£]\d+(?:[.,]\d+)*|(?<![\w.])\d+(?:[.,]\d+)*\s?(?:ms|µs|ns|s|sec|seconds?|min|minutes?|h|hours?|days?|weeks?|B|bytes?|KB|MB|GB|TB|KiB|MiB|GiB|%|px|tokens?|°C|°F|km|kg|m|EUR|USD|GBP)(?![\w%])/g;
const CODE_PATTERN = /`[^`\n]+`/g;
const TRAILING_PUNCTUATION = /[.,;:!?]+$/;

/** The blocks of a serialized span, oldest first. */
export function parseSpan(conversation: string): SpanBlock[] {
  return [...conversation.matchAll(BLOCK_PATTERN)].map((match) => {
    const body = match[2] ?? "";
    const tools = [...body.matchAll(TOOL_PATTERN)].map(
      (tool): ToolElement => ({
        kind: tool[1] as ToolElement["kind"],
        name: tool[2] ?? "",
        body: tool[3] ?? "",
      }),
    );
    return {
      role: match[1] as SpanBlock["role"],
      prose: body.replace(TOOL_PATTERN, "").trim(),
      tools,
    };
  });
}

/** The first non-empty line of `text`, cut to a readable length. */
export function firstLine(text: string): string | undefined {
  const line = text.split("\n").find((l) => l.trim());
  return line === undefined ? undefined : clip(line);
}

/** The user's constraints: sentences with must/never/always/…, and quoted strings, verbatim. */
export function constraintsOf(text: string): string[] {
  const stated = sentences(text).filter(
    (s) => s.length <= CONSTRAINT_MAX_CHARS && !s.endsWith("?") && CONSTRAINT_WORDS.test(s),
  );
  const quoted = [...text.matchAll(QUOTE_PATTERN)]
    .map((q) => ({ quote: q[0], inner: (q[1] ?? q[2] ?? "").trim() }))
    .filter(
      ({ quote, inner }) => inner.length >= QUOTE_MIN_CHARS && quote.length <= CONSTRAINT_MAX_CHARS,
    )
    .map(({ quote }) => quote)
    .filter((quote) => !stated.some((s) => s.includes(quote)));
  // In the order the user wrote them.
  return [...stated, ...quoted].sort((a, b) => text.indexOf(a) - text.indexOf(b));
}

/** The assistant's last substantive line: where the work stood when it stopped. */
export function conclusionOf(prose: string): string | undefined {
  const lines = prose
    .split("\n")
    .map((line) => line.trim().replace(/^(?:[-*+]|\d+[.)])\s+/, ""))
    .filter((line) => line && !line.startsWith("#") && !ASIDE_LINE.test(line));
  const last = lines.at(-1);
  return last === undefined ? undefined : clip(last);
}

/**
 * Short assistant statements that carry a number of their own: values it
 * established. Numbers inside a URL or a quotation (the assistant echoing the
 * user) do not count, nor do questions and lead-ins.
 */
export function factsOf(prose: string): string[] {
  return sentences(prose).filter((s) => {
    if (s.length > FACT_MAX_CHARS || /[?:]$/.test(s) || !quotesBalanced(s)) return false;
    return /\d/.test(s.replace(URL_PATTERN, "").replace(QUOTE_PATTERN, ""));
  });
}

/** URLs, paths, hashes, numbers with units and code spans, in order of appearance. */
export function artifactsOf(text: string): string[] {
  const found: Array<{ at: number; value: string }> = [];
  let rest = text;
  // Each kind is masked once found, so a URL's path is not listed again as a path.
  for (const pattern of [CODE_PATTERN, URL_PATTERN, PATH_PATTERN, HASH_PATTERN, QUANTITY_PATTERN]) {
    for (const match of rest.matchAll(pattern)) {
      const value =
        pattern === CODE_PATTERN ? match[0] : match[0].replace(TRAILING_PUNCTUATION, "");
      if (value.length <= ARTIFACT_MAX_CHARS) found.push({ at: match.index, value });
    }
    rest = rest.replace(pattern, (m) => " ".repeat(m.length));
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.value);
}

/** A tool error as one line: which tool, and what it said. */
export function errorOf(tool: ToolElement): string {
  return clip(`${tool.name}: ${tool.body.replace(/\s+/g, " ").trim()}`);
}

/** Sentences of `text`, one line each, markdown list markers removed. */
function sentences(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim().replace(/^(?:[-*+>]|\d+[.)])\s+/, ""))
    .flatMap((line) => line.split(SENTENCE_END))
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A sentence split inside a quotation is a fragment, not a statement. */
function quotesBalanced(sentence: string): boolean {
  const count = (pattern: RegExp) => sentence.match(pattern)?.length ?? 0;
  return count(/“/g) === count(/”/g) && count(/"/g) % 2 === 0;
}

/** One line, cut at a word boundary with "…" when too long. */
function clip(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  if (line.length <= LINE_MAX_CHARS) return line;
  const cut = line.slice(0, LINE_MAX_CHARS);
  const space = cut.lastIndexOf(" ");
  return `${(space > LINE_MAX_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
