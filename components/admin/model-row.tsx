"use client";

import { Check } from "lucide-react";
import { type FormEvent, useId, useState } from "react";
import type { AdminModel } from "@/lib/admin/models";
import type { OverrideInput } from "@/lib/admin/override-input";
import { countOf, formatCount } from "@/lib/count-text";
import { percentText } from "../stats/format";
import { buttonGhost, buttonPrimary, inputBase } from "../ui/styles";
import {
  type DraftErrors,
  draftOf,
  draftOnRefresh,
  type OverrideDraft,
  parseDraft,
  sameDraft,
} from "./override-draft";
import { SourceBadge } from "./source-badge";
import { STACKED_CELL } from "./stacked-cell";
import type { SaveResult } from "./use-admin-models";
import { LayerCell, ObservedCell, OutputCell } from "./window-cells";

type Props = {
  model: AdminModel;
  onSave: (input: OverrideInput) => Promise<SaveResult>;
};

type RowProps = Props & {
  /** Forgets the model's observed window; a message when that failed. */
  onForget: (model: AdminModel) => Promise<string | null>;
};

type Status =
  | { kind: "idle" }
  | { kind: "saving" }
  | { kind: "saved" }
  | { kind: "failed"; message: string };

/** One model: what its window resolves to, and an inline editor for its override. */
export function ModelRow({ model, onSave, onForget }: RowProps) {
  return (
    // Below md the row stacks its cells, so the override editor is on the screen rather than
    // past the right edge of a table scrolled sideways.
    <tr
      data-model-id={model.id}
      className="flex flex-wrap gap-x-6 gap-y-3 p-4 align-top md:table-row md:p-0"
    >
      <td className="block w-full md:table-cell md:w-auto md:py-3 md:pr-4 md:pl-4">
        <p className="font-medium">{model.label}</p>
        <p className="font-mono text-xs text-muted">{model.id}</p>
        {model.listed ? null : (
          <p className="mt-0.5 text-xs text-amber-700">Not in the provider's list</p>
        )}
      </td>
      <td className={`${STACKED_CELL} text-zinc-700`} data-label="Provider">
        {model.providerLabel}
      </td>
      <td
        className={`${STACKED_CELL} tabular-nums md:text-right`}
        data-label="Window"
        data-testid="resolved-window"
        title={model.windows.label}
      >
        {formatCount(model.contextWindow)}
      </td>
      <LayerCell layer={model.windows.trained} testId="trained-window" label="Trained" />
      <LayerCell layer={model.windows.loaded} testId="loaded-window" label="Loaded" />
      <ObservedCell
        observed={model.windows.observed}
        label={model.label}
        onForget={() => onForget(model)}
      />
      <OutputCell contextWindow={model.contextWindow} maxOutputTokens={model.maxOutputTokens} />
      <td className={STACKED_CELL} data-label="Source">
        <SourceBadge source={model.source} matchedId={model.matchedId} />
      </td>
      <td
        className={`${STACKED_CELL} w-full text-zinc-700 md:w-auto md:max-w-48`}
        data-label="Calibration"
        data-testid="calibration"
      >
        <span className="tabular-nums">×{model.calibration.ratio.toFixed(2)}</span>
        <span className="block text-xs text-muted">{calibrationText(model.calibration)}</span>
      </td>
      <td className="block w-full md:table-cell md:w-auto md:py-3 md:pr-4">
        <OverrideEditor model={model} onSave={onSave} />
      </td>
    </tr>
  );
}

/**
 * The calibration ratio in words: how the provider's real counts compare with Fold's estimate,
 * and how many replies taught it. Fold multiplies its estimates by the ratio.
 */
export function calibrationText(calibration: { ratio: number; samples: number }): string {
  const { ratio, samples } = calibration;
  const percent = Math.round(Math.abs(ratio - 1) * 100);
  const compared =
    percent === 0
      ? "The provider counts about as many tokens as Fold estimates"
      : `The provider counts ${percentText(percent)} ${ratio > 1 ? "more" : "fewer"} tokens than Fold estimates`;
  if (samples === 0)
    return `${compared}: a cautious starting guess, until replies show the real counts.`;
  return `${compared}, learned from ${countOf(samples, "reply", "replies")}.`;
}

function OverrideEditor({ model, onSave }: Props) {
  const id = useId();
  const saved = draftOf(model.override);
  const [draft, setDraft] = useState<OverrideDraft>(saved);
  const [errors, setErrors] = useState<DraftErrors>({});
  const [status, setStatus] = useState<Status>({ kind: "idle" });
  const saving = status.kind === "saving";
  const dirty = !sameDraft(draft, saved);
  // A new override from the server (a Refresh that found another admin's change) replaces the
  // fields unless the admin has changed them: Save would write the old one back.
  const [shown, setShown] = useState<OverrideDraft>(saved);
  if (!sameDraft(saved, shown)) {
    setShown(saved);
    setDraft(draftOnRefresh(draft, shown, saved));
  }

  function edit(field: keyof OverrideDraft, value: string) {
    setDraft((current) => ({ ...current, [field]: value }));
    setErrors((current) => ({ ...current, [field]: undefined }));
    if (status.kind !== "saving") setStatus({ kind: "idle" });
  }

  async function submit(next: OverrideDraft) {
    const parsed = parseDraft(next, {
      provider: model.provider,
      model: model.model,
      // Without a window override the row already shows the window the chain gives.
      chainWindow: model.override?.contextWindow == null ? model.contextWindow : null,
      chainOutput: model.override?.maxOutputTokens == null ? model.maxOutputTokens : null,
    });
    if (!parsed.ok) {
      setErrors(parsed.errors);
      return;
    }
    setErrors({});
    setStatus({ kind: "saving" });
    // Saved over the override this row shows only: another admin's since is not overwritten.
    const result = await onSave({ ...parsed.input, from: model.override?.updatedAt ?? null });
    if (result.ok) {
      setDraft(draftOf(result.model.override));
      setStatus({ kind: "saved" });
    } else {
      setStatus({ kind: "failed", message: result.message });
    }
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (saving || !dirty) return;
    void submit(draft);
  }

  const windowError = errors.contextWindow;
  const outputError = errors.maxOutputTokens;
  return (
    <form
      onSubmit={onSubmit}
      noValidate
      className="space-y-1.5"
      aria-label={`Override for ${model.label}`}
    >
      <div className="flex flex-wrap items-end gap-2">
        <TokenField
          label="Window"
          ariaLabel={`Context window override for ${model.label}`}
          value={draft.contextWindow}
          error={windowError}
          errorId={`${id}-window`}
          busy={saving}
          onChange={(value) => edit("contextWindow", value)}
        />
        <TokenField
          label="Max output"
          ariaLabel={`Max output override for ${model.label}`}
          value={draft.maxOutputTokens}
          error={outputError}
          errorId={`${id}-output`}
          busy={saving}
          onChange={(value) => edit("maxOutputTokens", value)}
        />
        {/* Not `disabled`: a control that becomes disabled drops its focus to the page. */}
        <button
          type="submit"
          aria-disabled={saving || !dirty}
          className={`${buttonPrimary} px-3 py-1.5`}
        >
          {saving ? "Saving…" : "Save"}
        </button>
        <button
          type="button"
          aria-disabled={saving || model.override === null}
          onClick={() => {
            if (saving || model.override === null) return;
            void submit({ contextWindow: "", maxOutputTokens: "" });
          }}
          className={`${buttonGhost} px-2 py-1.5`}
        >
          Clear override
        </button>
      </div>
      {windowError ? (
        <p id={`${id}-window`} className="text-xs text-red-700">
          {windowError}
        </p>
      ) : null}
      {outputError ? (
        <p id={`${id}-output`} className="text-xs text-red-700">
          {outputError}
        </p>
      ) : null}
      <div aria-live="polite" className="text-xs">
        {status.kind === "failed" ? (
          <p role="alert" className="text-red-700">
            {status.message}
          </p>
        ) : null}
        {status.kind === "saved" ? (
          <p className="inline-flex items-center gap-1 text-emerald-700">
            <Check size={12} /> Saved — applies from the next request.
          </p>
        ) : null}
      </div>
    </form>
  );
}

type TokenFieldProps = {
  label: string;
  ariaLabel: string;
  value: string;
  error: string | undefined;
  errorId: string;
  /** Saving: read-only (still focusable, where disabled would drop the focus). */
  busy: boolean;
  onChange: (value: string) => void;
};

/**
 * A token count; empty means "from the chain", shown as the "auto" placeholder. Text, not a
 * number input: a browser reads "128,000" in one as empty, which would clear the override.
 */
function TokenField({ label, ariaLabel, value, error, errorId, busy, onChange }: TokenFieldProps) {
  return (
    <label className="block w-28 space-y-0.5">
      <span className="text-xs text-muted">{label}</span>
      <input
        type="text"
        inputMode="numeric"
        placeholder="auto"
        aria-label={ariaLabel}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? errorId : undefined}
        value={value}
        readOnly={busy}
        aria-busy={busy || undefined}
        onChange={(e) => onChange(e.target.value)}
        className={`${inputBase} py-1.5 tabular-nums ${error ? "border-red-400" : ""}`}
      />
    </label>
  );
}
