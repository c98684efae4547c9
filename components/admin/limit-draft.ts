import { dailyMessageLimit, dailyTokenLimit } from "@/lib/admin/user-input";
import { isCountText, notACount, parsedCount } from "./count-text";

/**
 * The two daily limits as typed; an empty field means "none" (defaults) or "the default" (a user).
 * A count may be grouped as the override editor's are (count-text.ts).
 */
export type LimitDraft = { dailyMessageLimit: string; dailyTokenLimit: string };
export type LimitValues = { dailyMessageLimit: number | null; dailyTokenLimit: number | null };
export type LimitErrors = Partial<Record<keyof LimitDraft, string>>;

const LABELS: Record<keyof LimitDraft, string> = {
  dailyMessageLimit: "Messages",
  dailyTokenLimit: "Tokens",
};
const UNITS: Record<keyof LimitDraft, string> = {
  dailyMessageLimit: "messages",
  dailyTokenLimit: "tokens",
};

export function limitDraftOf(values: LimitValues): LimitDraft {
  return {
    dailyMessageLimit: values.dailyMessageLimit?.toString() ?? "",
    dailyTokenLimit: values.dailyTokenLimit?.toString() ?? "",
  };
}

/** Checks a draft by the routes' own schemas, so the messages match what the server would say. */
export function parseLimitDraft(
  draft: LimitDraft,
): { ok: true; values: LimitValues } | { ok: false; errors: LimitErrors } {
  const errors: LimitErrors = {};
  const values: LimitValues = { dailyMessageLimit: null, dailyTokenLimit: null };
  for (const [field, schema] of [
    ["dailyMessageLimit", dailyMessageLimit],
    ["dailyTokenLimit", dailyTokenLimit],
  ] as const) {
    const count = parsedCount(draft[field]);
    if (count === null) continue;
    const parsed = schema.safeParse(count);
    if (parsed.success) values[field] = parsed.data;
    else {
      const message = isCountText(draft[field])
        ? (parsed.error.issues[0]?.message ?? "is not valid")
        : notACount(UNITS[field]);
      errors[field] = `${LABELS[field]} ${message}.`;
    }
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, values };
}

/**
 * The limits that differ from those stored, the only ones a save sends: another admin's change
 * to the other limit meanwhile is kept, not written back over.
 */
export function changedLimits(stored: LimitValues, next: LimitValues): Partial<LimitValues> {
  const changed: Partial<LimitValues> = {};
  if (next.dailyMessageLimit !== stored.dailyMessageLimit) {
    changed.dailyMessageLimit = next.dailyMessageLimit;
  }
  if (next.dailyTokenLimit !== stored.dailyTokenLimit) {
    changed.dailyTokenLimit = next.dailyTokenLimit;
  }
  return changed;
}
