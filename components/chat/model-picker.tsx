"use client";

import { ChevronDown } from "lucide-react";
import type { PickableModel } from "./use-models";

type Props = {
  models: PickableModel[];
  value: string | null;
  onChange: (modelId: string) => void;
  disabled?: boolean;
};

/** A native select grouped by provider: keyboard-friendly and cheap. */
export function ModelPicker({ models, value, onChange, disabled }: Props) {
  const groups = new Map<string, PickableModel[]>();
  for (const model of models) {
    groups.set(model.providerLabel, [...(groups.get(model.providerLabel) ?? []), model]);
  }
  const known = models.some((m) => m.id === value);
  return (
    <label className="relative inline-flex min-w-0 items-center">
      <span className="sr-only">Model</span>
      <select
        aria-label="Model"
        value={value ?? ""}
        disabled={disabled || models.length === 0}
        onChange={(e) => onChange(e.target.value)}
        className="w-full max-w-56 min-w-0 appearance-none truncate rounded-lg border border-line bg-white py-1 pr-7 pl-2 text-xs text-zinc-700 outline-none hover:bg-zinc-50 focus-visible:ring-2 focus-visible:ring-zinc-500 disabled:opacity-50"
      >
        {!known && value ? <option value={value}>{value} (unavailable)</option> : null}
        {[...groups.entries()].map(([provider, list]) => (
          <optgroup key={provider} label={provider}>
            {list.map((model) => (
              <option key={model.id} value={model.id}>
                {model.label}
              </option>
            ))}
          </optgroup>
        ))}
      </select>
      <ChevronDown size={12} className="pointer-events-none absolute right-2 text-zinc-500" />
    </label>
  );
}
