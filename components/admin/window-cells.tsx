"use client";

import { TriangleAlert } from "lucide-react";
import { useState } from "react";
import type { ModelWindows } from "@/lib/admin/model-windows";
import { outputReserveOf } from "@/lib/context/budget";
import { formatCount } from "@/lib/count-text";
import { buttonGhost } from "../ui/styles";
import { STACKED_CELL } from "./stacked-cell";

type Layer = ModelWindows["trained"];

/** A trained or loaded window: the number, and who said it. */
export function LayerCell({
  layer,
  testId,
  label,
}: {
  layer: Layer;
  testId: string;
  label: string;
}) {
  return (
    <td className={`${STACKED_CELL} tabular-nums`} data-label={label} data-testid={testId}>
      {layer ? (
        <>
          <span className="block md:text-right">{formatCount(layer.tokens)}</span>
          <span className="block text-xs text-muted md:text-right">{layer.from}</span>
        </>
      ) : (
        <span className="block text-muted md:text-right">—</span>
      )}
    </td>
  );
}

/**
 * The model's output limit as a turn keeps it: what a reply may write, and, when the window is
 * too small to keep all of it free (never more than half the window), what is kept and why.
 */
export function outputLimitText(
  contextWindow: number,
  maxOutputTokens: number | null,
): { tokens: string; note: string | null } {
  if (maxOutputTokens === null) return { tokens: "—", note: null };
  const kept = outputReserveOf({ contextWindow, maxOutputTokens });
  if (kept >= maxOutputTokens) return { tokens: formatCount(maxOutputTokens), note: null };
  return {
    tokens: formatCount(kept),
    note: `of ${formatCount(maxOutputTokens)}: a reply keeps at most half the window`,
  };
}

/** The output limit a reply gets with this window. */
export function OutputCell({
  contextWindow,
  maxOutputTokens,
}: {
  contextWindow: number;
  maxOutputTokens: number | null;
}) {
  const { tokens, note } = outputLimitText(contextWindow, maxOutputTokens);
  return (
    <td
      className={`${STACKED_CELL} tabular-nums`}
      data-label="Max output"
      data-testid="resolved-output"
    >
      <span className="block md:text-right">{tokens}</span>
      {note ? <span className="block text-xs text-muted md:text-right">{note}</span> : null}
    </td>
  );
}

const STATUS_TEXT: Record<NonNullable<ModelWindows["observed"]>["status"], string> = {
  "in use": "in use",
  overridden: "an override wins",
  stale: "no longer applies: the server reports another window now",
};

/** The window a silent cut revealed: what was kept of what, when, whether it applies, the fix. */
export function ObservedCell({
  observed,
  label,
  onForget,
}: {
  observed: ModelWindows["observed"];
  label: string;
  onForget: () => Promise<string | null>;
}) {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  if (!observed) {
    return (
      <td
        className={`${STACKED_CELL} tabular-nums`}
        data-label="Observed"
        data-testid="observed-window"
      >
        <span className="block text-muted md:text-right">—</span>
      </td>
    );
  }
  async function forget() {
    setBusy(true);
    setFailure(await onForget());
    setBusy(false);
  }
  return (
    <td
      className={`${STACKED_CELL} w-full text-xs md:w-auto md:max-w-72`}
      data-label="Observed"
      data-testid="observed-window"
    >
      <p className="flex items-center gap-1 md:justify-end text-sm tabular-nums text-amber-800">
        <TriangleAlert size={14} aria-hidden="true" />
        {formatCount(observed.tokens)}
      </p>
      <p className="text-muted">
        The server kept {formatCount(observed.tokens)} of about {formatCount(observed.sentTokens)}{" "}
        tokens on {new Date(observed.observedAt).toLocaleDateString()}; Fold had {observed.believed}{" "}
        ({STATUS_TEXT[observed.status]}).
      </p>
      <p className="mt-1 text-zinc-700">{observed.fix}</p>
      <button
        type="button"
        disabled={busy}
        onClick={() => void forget()}
        aria-label={`Forget the observed window of ${label}`}
        className={`${buttonGhost} mt-1 px-2 py-1 text-xs`}
      >
        {busy ? "Forgetting…" : "Forget"}
      </button>
      {failure ? (
        <p role="alert" className="text-red-700">
          {failure}
        </p>
      ) : null}
    </td>
  );
}
