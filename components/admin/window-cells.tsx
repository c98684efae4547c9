"use client";

import { TriangleAlert } from "lucide-react";
import { useState } from "react";
import type { ModelWindows } from "@/lib/admin/model-windows";
import { outputReserveOf } from "@/lib/context/budget";
import { formatCount } from "../stats/format";
import { buttonGhost } from "../ui/styles";

type Layer = ModelWindows["trained"];

/** A trained or loaded window: the number, and who said it. */
export function LayerCell({ layer, testId }: { layer: Layer; testId: string }) {
  return (
    <td className="py-3 pr-4 tabular-nums" data-testid={testId}>
      {layer ? (
        <>
          <span className="block text-right">{formatCount(layer.tokens)}</span>
          <span className="block text-right text-xs text-muted">{layer.from}</span>
        </>
      ) : (
        <span className="block text-right text-muted">—</span>
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
    <td className="py-3 pr-4 tabular-nums" data-testid="resolved-output">
      <span className="block text-right">{tokens}</span>
      {note ? <span className="block text-right text-xs text-muted">{note}</span> : null}
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
      <td className="py-3 pr-4 tabular-nums" data-testid="observed-window">
        <span className="block text-right text-muted">—</span>
      </td>
    );
  }
  async function forget() {
    setBusy(true);
    setFailure(await onForget());
    setBusy(false);
  }
  return (
    <td className="max-w-72 py-3 pr-4 text-xs" data-testid="observed-window">
      <p className="flex items-center justify-end gap-1 text-sm tabular-nums text-amber-800">
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
