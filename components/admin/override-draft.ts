import { type OverrideInput, overrideInput } from "@/lib/admin/override-input";
import { windowTooSmall } from "@/lib/context/budget";

/**
 * The editor's two fields as typed; an empty field means "take it from the chain". A number may
 * be written with thousands separators ("128,000", "128 000").
 */
export type OverrideDraft = { contextWindow: string; maxOutputTokens: string };
export type DraftField = keyof OverrideDraft;
export type DraftErrors = Partial<Record<DraftField, string>>;

const FIELD_LABELS: Record<DraftField, string> = {
  contextWindow: "Window",
  maxOutputTokens: "Max output",
};

export function draftOf(
  override: { contextWindow: number | null; maxOutputTokens: number | null } | null,
): OverrideDraft {
  return {
    contextWindow: override?.contextWindow?.toString() ?? "",
    maxOutputTokens: override?.maxOutputTokens?.toString() ?? "",
  };
}

export function sameDraft(a: OverrideDraft, b: OverrideDraft): boolean {
  return (
    withoutSeparators(a.contextWindow) === withoutSeparators(b.contextWindow) &&
    withoutSeparators(a.maxOutputTokens) === withoutSeparators(b.maxOutputTokens)
  );
}

/**
 * The draft once the server shows a new override (a Refresh found another admin's change): the
 * new one while the draft still reads as the override shown before, else Save would write the
 * old one back; a draft the admin has changed stays theirs. Typing a digit and deleting it
 * leaves it unchanged.
 */
export function draftOnRefresh(
  draft: OverrideDraft,
  shownBefore: OverrideDraft,
  shownNow: OverrideDraft,
): OverrideDraft {
  return sameDraft(draft, shownBefore) ? shownNow : draft;
}

/**
 * Checks a draft by the route's own schema, so the messages match what the server would say.
 * `chainWindow` is the window an empty window field falls back to, when the row knows it;
 * `chainOutput` likewise for an empty max-output field.
 */
export function parseDraft(
  draft: OverrideDraft,
  target: {
    provider: string;
    model: string;
    chainWindow: number | null;
    chainOutput?: number | null;
  },
): { ok: true; input: OverrideInput } | { ok: false; errors: DraftErrors } {
  const parsed = overrideInput.safeParse({
    provider: target.provider,
    model: target.model,
    contextWindow: countOf(draft.contextWindow),
    maxOutputTokens: countOf(draft.maxOutputTokens),
  });
  if (!parsed.success) {
    const errors: DraftErrors = {};
    for (const issue of parsed.error.issues) {
      const field = issue.path[0];
      if ((field === "contextWindow" || field === "maxOutputTokens") && !errors[field]) {
        const message = isCount(draft[field]) ? issue.message : NOT_A_COUNT;
        errors[field] = `${FIELD_LABELS[field]} ${message}.`;
      }
    }
    return { ok: false, errors };
  }
  const { contextWindow, maxOutputTokens } = parsed.data;
  if (
    contextWindow === null &&
    maxOutputTokens !== null &&
    target.chainWindow !== null &&
    maxOutputTokens >= target.chainWindow
  ) {
    return {
      ok: false,
      errors: {
        maxOutputTokens: `Max output must be below the model's window (${target.chainWindow.toLocaleString("en-US")}).`,
      },
    };
  }
  // The route checks the window it resolves; the row can say the same before a round trip.
  if (contextWindow !== null && maxOutputTokens === null && target.chainOutput != null) {
    const tooSmall = windowTooSmall({ contextWindow, maxOutputTokens: target.chainOutput });
    if (tooSmall) {
      return {
        ok: false,
        errors: {
          contextWindow: `Window ${tooSmall}, with the model's output limit of ${target.chainOutput.toLocaleString("en-US")}.`,
        },
      };
    }
  }
  return { ok: true, input: parsed.data };
}

/**
 * Digits, plain or grouped by commas or spaces in threes ("128,000", "16 384") or the Indian
 * way ("1,00,000"). Nothing else: a dot groups thousands in some locales and marks decimals in
 * others, so "8.000" is no count, and neither is "8,5" (a decimal comma) or "1 2".
 */
const COUNT_TEXT = /^(?:\d+|\d{1,3}(?:[\s,]\d{3})+|\d{1,2}(?:[\s,]\d{2})*[\s,]\d{3})$/;
const NOT_A_COUNT = "must be a whole number of tokens, in digits (commas or spaces may group them)";

function isCount(text: string): boolean {
  const trimmed = text.trim();
  return trimmed === "" || COUNT_TEXT.test(trimmed);
}

/** Empty is null (from the chain); text that is no count is NaN, which the schema refuses. */
function countOf(text: string): number | null {
  if (!isCount(text)) return Number.NaN;
  const digits = withoutSeparators(text);
  return digits === "" ? null : Number(digits);
}

/** The text without the separators a count is often written with: commas and spaces. */
function withoutSeparators(text: string): string {
  return text.replace(/[\s,]/g, "");
}
