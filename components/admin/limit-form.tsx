"use client";

import { Check } from "lucide-react";
import { type FormEvent, useId, useState } from "react";
import { buttonPrimary, inputBase } from "../ui/styles";
import {
  changedLimits,
  type LimitDraft,
  type LimitErrors,
  type LimitValues,
  limitDraftOf,
  parseLimitDraft,
} from "./limit-draft";
import type { ActionResult } from "./use-admin-users";

type Props = {
  /** What the form is for, for screen readers: "Default limits", "Limits for Ada". */
  label: string;
  values: LimitValues;
  /** What an empty field means, shown as its placeholder. */
  placeholders: { dailyMessageLimit: string; dailyTokenLimit: string };
  /** Called with the limits the admin changed, only those. */
  onSave: (changed: Partial<LimitValues>) => Promise<ActionResult>;
};

/** Two daily limits and a Save button; checks the numbers by the route's rules first. */
export function LimitForm({ label, values, placeholders, onSave }: Props) {
  const id = useId();
  const stored = limitDraftOf(values);
  const [draft, setDraft] = useState<LimitDraft>(stored);
  // The numbers the fields were filled from: a save sends only what differs from them.
  const [base, setBase] = useState(values);
  const [errors, setErrors] = useState<LimitErrors>({});
  const [status, setStatus] = useState<"idle" | "saving" | "saved" | string>("idle");
  // New numbers from the server (a Refresh that found another admin's change) replace the
  // fields unless the admin is changing them: Save would write the old ones back.
  const storedKey = `${stored.dailyMessageLimit}|${stored.dailyTokenLimit}`;
  const [shownKey, setShownKey] = useState(storedKey);
  const [edited, setEdited] = useState(false);
  if (storedKey !== shownKey) {
    setShownKey(storedKey);
    if (!edited) {
      setDraft(stored);
      setBase(values);
    }
  }

  function edit(field: keyof LimitDraft, value: string) {
    setDraft((d) => ({ ...d, [field]: value }));
    setErrors((e) => ({ ...e, [field]: undefined }));
    setStatus("idle");
    setEdited(true);
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (status === "saving") return;
    const parsed = parseLimitDraft(draft);
    if (!parsed.ok) {
      setErrors(parsed.errors);
      return;
    }
    const changed = changedLimits(base, parsed.values);
    if (Object.keys(changed).length === 0) {
      setStatus("saved");
      setEdited(false);
      setShownKey("");
      return;
    }
    setStatus("saving");
    const failed = await onSave(changed);
    setStatus(failed ?? "saved");
    if (failed) return;
    setEdited(false);
    // The fields show what is stored now, another admin's change to the other limit included.
    setShownKey("");
  }

  const messages = [errors.dailyMessageLimit, errors.dailyTokenLimit].filter(Boolean);
  return (
    <form onSubmit={submit} noValidate aria-label={label} className="space-y-1">
      <div className="flex flex-wrap items-end gap-2">
        <Field
          label="Messages / day"
          value={draft.dailyMessageLimit}
          placeholder={placeholders.dailyMessageLimit}
          invalid={Boolean(errors.dailyMessageLimit)}
          errorId={`${id}-errors`}
          onChange={(v) => edit("dailyMessageLimit", v)}
        />
        <Field
          label="Tokens / day"
          value={draft.dailyTokenLimit}
          placeholder={placeholders.dailyTokenLimit}
          invalid={Boolean(errors.dailyTokenLimit)}
          errorId={`${id}-errors`}
          onChange={(v) => edit("dailyTokenLimit", v)}
        />
        <button
          type="submit"
          // Keeps its focus while saving (a disabled button drops it); submit waits meanwhile.
          aria-disabled={status === "saving"}
          className={`${buttonPrimary} px-3 py-1.5`}
        >
          {status === "saving" ? "Saving…" : "Save"}
        </button>
      </div>
      <div id={`${id}-errors`} aria-live="polite" className="text-xs">
        {messages.map((m) => (
          <p key={m} className="text-red-700">
            {m}
          </p>
        ))}
        {status === "saved" ? (
          <p className="inline-flex items-center gap-1 text-emerald-700">
            <Check size={12} /> Saved
          </p>
        ) : null}
        {status !== "idle" && status !== "saving" && status !== "saved" ? (
          <p role="alert" className="text-red-700">
            {status}
          </p>
        ) : null}
      </div>
    </form>
  );
}

type FieldProps = {
  label: string;
  value: string;
  placeholder: string;
  invalid: boolean;
  errorId: string;
  onChange: (value: string) => void;
};

function Field({ label, value, placeholder, invalid, errorId, onChange }: FieldProps) {
  return (
    <label className="block w-36 space-y-0.5">
      <span className="text-xs text-muted">{label}</span>
      <input
        type="text"
        inputMode="numeric"
        value={value}
        placeholder={placeholder}
        aria-invalid={invalid || undefined}
        aria-describedby={invalid ? errorId : undefined}
        onChange={(e) => onChange(e.target.value)}
        className={`${inputBase} py-1.5 tabular-nums ${invalid ? "border-red-400" : ""}`}
      />
    </label>
  );
}
