/**
 * The preservation guard (DESIGN §8, "The summarizer"). Summarizers drop
 * identifiers — a URL, a path, a number with its unit — and the assistant then
 * guesses them. Whatever the summary lost is appended verbatim, within a
 * bounded budget, and carried forward from one summary to the next.
 */
import type { FoldUIMessage } from "@/lib/message/ui-message";
import { extractIdentifiers, type Identifier } from "./identifiers";
import { VERBATIM_REFERENCES_HEADING } from "./prompts";

export {
  extractIdentifiers,
  type Identifier,
  type IdentifierKind,
  identifiersInText,
} from "./identifiers";

const USER_LABEL = "Said by the user:";
const OTHER_LABEL = "From the conversation:";

export type PreserveInput = {
  /** The full, unpruned span the summary covers. */
  span: readonly FoldUIMessage[];
  /** Its "Verbatim references" are carried forward. */
  previousSummary: string | null;
  summary: string;
  /** Ceiling for the appended section, heading included. */
  maxTokens: number;
  countTokens: (text: string) => number;
};

/**
 * `summary` plus a "Verbatim references" section listing the identifiers of
 * the span and of the previous summary's own section that the summary does not
 * contain verbatim. User identifiers first, then by count and recency; stops
 * when `maxTokens` is full. An echoed section in `summary` is merged, not doubled.
 */
export function preserveIdentifiers(input: PreserveInput): string {
  const { body, references: echoed } = splitVerbatimReferences(input.summary);
  const carried = input.previousSummary
    ? splitVerbatimReferences(input.previousSummary).references
    : [];
  const candidates = mergeCandidates(extractIdentifiers(input.span), [...carried, ...echoed]);
  const missing = candidates.filter((id) => !containsVerbatim(body, id.value));

  const chosen: Identifier[] = [];
  const fixed = input.countTokens(renderSection([{ ...placeholder, fromUser: true }, placeholder]));
  let used = fixed;
  for (const id of missing) {
    if (chosen.some((c) => containsVerbatim(c.value, id.value))) continue; // listed inside another
    const cost = input.countTokens(`- ${id.value}\n`);
    if (used + cost > input.maxTokens) break;
    chosen.push(id);
    used += cost;
  }
  // Per-line counts approximate the whole; make the ceiling exact.
  while (chosen.length > 0 && input.countTokens(renderSection(chosen)) > input.maxTokens) {
    chosen.pop();
  }
  if (chosen.length === 0) return body;
  return `${body}\n\n${renderSection(chosen)}`;
}

const placeholder: Identifier = {
  value: "",
  kind: "code",
  fromUser: false,
  count: 0,
  lastIndex: 0,
};

/** Span identifiers first (already sorted), then carried ones; one entry per value. */
function mergeCandidates(fromSpan: Identifier[], carried: Identifier[]): Identifier[] {
  const byValue = new Map(fromSpan.map((id) => [id.value, id]));
  const extra: Identifier[] = [];
  for (const id of carried) {
    const known = byValue.get(id.value);
    if (known) known.fromUser ||= id.fromUser;
    else {
      byValue.set(id.value, id);
      extra.push(id);
    }
  }
  const all = [...fromSpan, ...extra];
  // Stable: user identifiers (span or carried) first, each group in its own order.
  return [...all.filter((id) => id.fromUser), ...all.filter((id) => !id.fromUser)];
}

function renderSection(ids: readonly Identifier[]): string {
  const lines = [`## ${VERBATIM_REFERENCES_HEADING}`];
  const user = ids.filter((id) => id.fromUser);
  const other = ids.filter((id) => !id.fromUser);
  if (user.length > 0) lines.push(USER_LABEL, ...user.map((id) => `- ${id.value}`));
  if (other.length > 0) lines.push(OTHER_LABEL, ...other.map((id) => `- ${id.value}`));
  return lines.join("\n");
}

const SECTION_HEADING = new RegExp(`^#{1,6}\\s*${VERBATIM_REFERENCES_HEADING}\\s*:?\\s*$`, "i");

/**
 * A summary without its "Verbatim references" section, and the references the
 * section listed (bullets after the user label count as the user's).
 */
export function splitVerbatimReferences(summary: string): {
  body: string;
  references: Identifier[];
} {
  const lines = summary.split("\n");
  const start = lines.findIndex((line) => SECTION_HEADING.test(line.trim()));
  if (start === -1) return { body: summary.trim(), references: [] };
  let end = start + 1;
  while (end < lines.length && !/^#{1,6}\s/.test(lines[end] ?? "")) end += 1;

  const references: Identifier[] = [];
  let fromUser = false;
  for (const raw of lines.slice(start + 1, end)) {
    const line = raw.trim();
    if (line === USER_LABEL) fromUser = true;
    else if (line === OTHER_LABEL) fromUser = false;
    else {
      const bullet = /^[-*]\s+(.+)$/.exec(line);
      const value = bullet?.[1]?.replace(/^`([^`]+)`$/, "$1").trim();
      if (value) references.push({ value, kind: "code", fromUser, count: 1, lastIndex: -1 });
    }
  }
  const body = [...lines.slice(0, start), ...lines.slice(end)].join("\n").trim();
  return { body, references };
}

/**
 * Whether `value` occurs in `text` as itself, not as the middle of a longer
 * token: "5 s" is not in "15 seconds", "abc1234" is not in "abc12345".
 */
export function containsVerbatim(text: string, value: string): boolean {
  if (value.length === 0) return true;
  const wordStart = /^\w/.test(value);
  const wordEnd = /\w$/.test(value);
  for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + 1)) {
    const before = text[at - 1] ?? "";
    const after = text[at + value.length] ?? "";
    if ((!wordStart || !/\w/.test(before)) && (!wordEnd || !/\w/.test(after))) return true;
  }
  return false;
}
