/**
 * A line of prose, JSON or code is judged by what most of it is, yet it may hold another
 * writing system's words: a birthday wish full of emoji, a Chinese name in an English
 * sentence, Russian values in a tool's JSON. Each family prices those at that system's price
 * (Gemma spends ≈ 0.6 per o200k token on emoji, Claude ≈ 3 on Arabic), not at prose's, so such
 * a segment's o200k tokens are split by the writing system of each token: a token with a
 * writing system's letters counts as that system (bytes of a character o200k splits count as
 * that character's), any other (Latin words, punctuation, spaces) as the segment's own class.
 * The split keeps o200k's total exactly.
 */
import o200kVocabulary from "gpt-tokenizer/bpeRanks/o200k_base";
import {
  type ClassSegment,
  type ContentClass,
  chineseScript,
  isScriptClass,
  type ScriptClass,
  scriptOf,
} from "./content-class";

/**
 * The writing system of a token's text: its first character's that has one, or null (Latin,
 * punctuation, symbols). CJK punctuation is no system's letters: it stays with its segment.
 */
export function tokenScript(text: string): ScriptClass | "chinese" | null {
  for (const ch of text) {
    const script = scriptOf(ch.codePointAt(0) ?? 0);
    if (script === "han" || script === "kana") return "chinese";
    if (script && script !== "cjk") return script;
  }
  return null;
}

type TokenScript = ScriptClass | "chinese" | "latin" | null;
/** A token of bytes inside a character: it belongs with the token before it. */
const CONTINUES = "continues";

/**
 * The writing system of a token that is part of a character (o200k spells most emoji and rare
 * letters in bytes): a first part by the lowest code point its leading bytes allow, a later
 * part as continuing the token before.
 */
export function byteTokenScript(bytes: readonly number[]): TokenScript | typeof CONTINUES {
  const [lead = 0, ...rest] = bytes;
  if (lead < 0xc0) return CONTINUES;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  // A lone lead byte of a longer character does not tell its block.
  if (length > 2 && rest.length === 0) return null;
  let code = lead & (0x7f >> length);
  for (let i = 1; i < length; i++) code = (code << 6) | ((rest[i - 1] ?? 0x80) & 0x3f);
  return tokenScript(String.fromCodePoint(code));
}

const LATIN_LETTER = /[A-Za-z]/;

/** Scripts of o200k token ids, filled as tokens are first met (the vocabulary never changes). */
const scriptsById = new Map<number, TokenScript | typeof CONTINUES>();

/** The script of an o200k token by its id: the vocabulary (indexed by id) holds its text or bytes. */
function scriptOfToken(id: number): TokenScript | typeof CONTINUES {
  let script = scriptsById.get(id);
  if (script === undefined) {
    const entry = o200kVocabulary[id];
    script = typeof entry === "string" ? tokenScript(entry) : entry ? byteTokenScript(entry) : null;
    if (script === null && typeof entry === "string" && LATIN_LETTER.test(entry)) script = "latin";
    scriptsById.set(id, script);
  }
  return script;
}

/**
 * A segment's o200k tokens (`ids`) by the class each counts as. In a writing system's segment a
 * token of Latin letters (a product name, an inline `x * x for x in range(10)`) counts as
 * prose: the families price a Latin word in a Chinese line as they price it in English, not
 * at Chinese's price (Qwen ≈ 0.8 per o200k token on Chinese, Claude ≈ 1.4). Spaces and
 * punctuation stay with the segment's class, as its probes were measured (class-priors.ts).
 */
export function splitByScript(
  segment: ClassSegment,
  ids: readonly number[],
): Map<ContentClass, number> {
  const tokens = new Map<ContentClass, number>();
  const own = segment.contentClass;
  const latin: ContentClass = isScriptClass(own) ? "prose" : own;
  let previous = own;
  for (const id of ids) {
    const script = scriptOfToken(id);
    const c =
      script === CONTINUES
        ? previous
        : script === null
          ? own
          : script === "latin"
            ? latin
            : script === "chinese"
              ? chineseScript(segment.letters)
              : script;
    tokens.set(c, (tokens.get(c) ?? 0) + 1);
    previous = c;
  }
  return tokens;
}
