import { type OverrideInput, overrideInput } from "@/lib/admin/override-input";
import { windowTooSmall } from "@/lib/context/budget";
import { isCountText, notACount, parsedCount, withoutSeparators } from "./count-text";

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
 * The draft once the server shows a new override (a Refresh, or a save refused because another
 * admin's came first), field by field: a field that still reads as the override shown before
 * takes the new one, else Save would write the old one back over the other admin's; a field the
 * admin has changed stays theirs. Typing a digit and deleting it leaves a field unchanged.
 */
export function draftOnRefresh(
  draft: OverrideDraft,
  shownBefore: OverrideDraft,
  shownNow: OverrideDraft,
): OverrideDraft {
  const field = (name: DraftField) =>
    withoutSeparators(draft[name]) === withoutSeparators(shownBefore[name])
      ? shownNow[name]
      : draft[name];
  return { contextWindow: field("contextWindow"), maxOutputTokens: field("maxOutputTokens") };
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
    contextWindow: parsedCount(draft.contextWindow),
    maxOutputTokens: parsedCount(draft.maxOutputTokens),
  });
  if (!parsed.success) {
    const errors: DraftErrors = {};
    for (const issue of parsed.error.issues) {
      const field = issue.path[0];
      if ((field === "contextWindow" || field === "maxOutputTokens") && !errors[field]) {
        const message = isCountText(draft[field]) ? issue.message : notACount("tokens");
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
