/**
 * Decoding of the character references that show up in real pages. Not the
 * full HTML5 table (2,000+ names): the common ones plus every numeric form,
 * which is what a model needs to read text. Unknown names stay as written.
 */

const NAMED: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ", // a plain space so it collapses like one
  ensp: " ",
  emsp: " ",
  thinsp: " ",
  shy: "",
  zwnj: "",
  zwj: "",
  lrm: "",
  rlm: "",
  ndash: "–",
  mdash: "—",
  minus: "−",
  hellip: "…",
  lsquo: "‘",
  rsquo: "’",
  sbquo: "‚",
  ldquo: "“",
  rdquo: "”",
  bdquo: "„",
  laquo: "«",
  raquo: "»",
  lsaquo: "‹",
  rsaquo: "›",
  bull: "•",
  middot: "·",
  dagger: "†",
  Dagger: "‡",
  prime: "′",
  Prime: "″",
  copy: "©",
  reg: "®",
  trade: "™",
  deg: "°",
  plusmn: "±",
  times: "×",
  divide: "÷",
  frac12: "½",
  frac14: "¼",
  frac34: "¾",
  sup2: "²",
  sup3: "³",
  micro: "µ",
  para: "¶",
  sect: "§",
  cent: "¢",
  pound: "£",
  yen: "¥",
  euro: "€",
  larr: "←",
  rarr: "→",
  uarr: "↑",
  darr: "↓",
  harr: "↔",
  le: "≤",
  ge: "≥",
  ne: "≠",
  asymp: "≈",
  infin: "∞",
  check: "✓",
  iexcl: "¡",
  iquest: "¿",
  szlig: "ß",
  eacute: "é",
  egrave: "è",
  ecirc: "ê",
  aacute: "á",
  agrave: "à",
  acirc: "â",
  atilde: "ã",
  auml: "ä",
  aring: "å",
  ccedil: "ç",
  iacute: "í",
  oacute: "ó",
  ocirc: "ô",
  otilde: "õ",
  ouml: "ö",
  oslash: "ø",
  uacute: "ú",
  uuml: "ü",
  ntilde: "ñ",
  Eacute: "É",
  Auml: "Ä",
  Ouml: "Ö",
  Uuml: "Ü",
  Ccedil: "Ç",
  Ntilde: "Ñ",
};

/** Names browsers also decode without the trailing semicolon. */
const LEGACY = new Set(["amp", "lt", "gt", "quot", "nbsp", "copy", "reg"]);

const REFERENCE = /&(?:#(\d{1,8});?|#[xX]([0-9a-fA-F]{1,7});?|([a-zA-Z][a-zA-Z0-9]{1,31})(;?))/g;

function fromCodePoint(codePoint: number): string {
  // NUL, surrogates and out-of-range values are parse errors; browsers show U+FFFD.
  if (codePoint === 0 || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff))
    return "\uFFFD";
  return String.fromCodePoint(codePoint);
}

export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(
    REFERENCE,
    (
      match: string,
      decimal: string | undefined,
      hex: string | undefined,
      name: string | undefined,
      semicolon: string | undefined,
    ) => {
      if (decimal !== undefined) return fromCodePoint(Number.parseInt(decimal, 10));
      if (hex !== undefined) return fromCodePoint(Number.parseInt(hex, 16));
      const value = name === undefined ? undefined : NAMED[name];
      if (value === undefined || name === undefined) return match;
      return semicolon || LEGACY.has(name) ? value : match;
    },
  );
}
