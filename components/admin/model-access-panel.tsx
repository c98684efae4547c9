"use client";

import { useState } from "react";
import type { ModelAccessInput, ModelAccessView } from "@/lib/admin/model-access-input";
import { countOf } from "@/lib/count-text";
import { useModelAccess } from "./use-model-access";

/** What the panel needs of a model row. */
type Model = {
  id: string;
  provider: string;
  model: string;
  label: string;
  providerLabel: string;
  /** In its provider's list: only those can be picked, and so allowed or not. */
  listed: boolean;
};

/**
 * Admin → Models: who may use which models (DESIGN §16). Per provider, every model it lists,
 * or only the ones ticked here; users see and can use only those.
 */
export function ModelAccessPanel({
  models,
  refreshKey,
}: {
  models: readonly Model[];
  /** Changes on each Refresh of the page: the allow-list is read again with the table. */
  refreshKey: number;
}) {
  const { state, save } = useModelAccess(refreshKey);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const providers = providersOf(models);

  async function change(input: ModelAccessInput) {
    setSaving(true);
    setError(await save(input));
    setSaving(false);
  }

  return (
    <section
      aria-labelledby="model-access-heading"
      className="space-y-3 rounded-2xl border border-line bg-white p-4 shadow-sm"
    >
      <div className="space-y-1">
        <h2 id="model-access-heading" className="text-sm font-semibold">
          Who can use which models
        </h2>
        <p className="text-xs text-muted">
          Users can pick every model a provider lists, unless you restrict the provider: then only
          the models you tick. Restricting starts with every listed model ticked; untick the ones
          users may not use. At least one model stays available to users. A chat on a model that is
          no longer allowed asks for another.
        </p>
      </div>
      {state.status === "error" ? (
        <p role="alert" className="text-sm text-red-700">
          {state.message}
        </p>
      ) : null}
      {state.status === "ready" && providers.length > 0 ? (
        <div className="grid gap-3 md:grid-cols-2">
          {providers.map(({ id, label, models: list }) => (
            <ProviderAccess
              key={id}
              provider={id}
              label={label}
              models={list}
              access={state.access}
              disabled={saving}
              onChange={change}
            />
          ))}
        </div>
      ) : null}
      {error ? (
        <p role="alert" className="text-xs text-red-700">
          {error}
        </p>
      ) : null}
    </section>
  );
}

type ProviderProps = {
  provider: string;
  label: string;
  models: readonly Model[];
  access: ModelAccessView;
  disabled: boolean;
  onChange: (input: ModelAccessInput) => void;
};

function ProviderAccess({ provider, label, models, access, disabled, onChange }: ProviderProps) {
  const restricted = access.restrictedProviders.includes(provider);
  const allowed = new Set(access.allowedModelIds);
  const count = restricted ? models.filter((m) => allowed.has(m.id)).length : models.length;
  return (
    <fieldset data-provider={provider} className="space-y-2 rounded-xl border border-line p-3">
      <legend className="px-1 text-sm font-medium">{label}</legend>
      <label className="flex items-center gap-2 text-sm">
        <input
          type="checkbox"
          checked={restricted}
          aria-disabled={disabled}
          onChange={(e) => {
            if (!disabled) onChange({ provider, restricted: e.target.checked });
          }}
        />
        Only allowed models
      </label>
      <p className="text-xs text-muted">
        {count} of {countOf(models.length, "model")} available to users
      </p>
      {restricted ? (
        <ul className="max-h-64 space-y-1 overflow-y-auto">
          {models.map((m) => (
            <li key={m.id}>
              <label className="flex items-center gap-2 text-sm">
                <input
                  type="checkbox"
                  aria-label={`Allow ${m.id}`}
                  checked={allowed.has(m.id)}
                  aria-disabled={disabled}
                  onChange={(e) => {
                    if (!disabled)
                      onChange({ provider, model: m.model, allowed: e.target.checked });
                  }}
                />
                <span>{m.label}</span>
                <span className="font-mono text-xs text-muted">{m.id}</span>
              </label>
            </li>
          ))}
        </ul>
      ) : null}
    </fieldset>
  );
}

/**
 * The models users could pick, by provider: a row the provider no longer lists (an override
 * left on it) is neither counted as available nor offered a tick box.
 */
export function providersOf(models: readonly Model[]) {
  const groups = new Map<string, { id: string; label: string; models: Model[] }>();
  for (const model of models) {
    if (!model.listed) continue;
    const group = groups.get(model.provider) ?? {
      id: model.provider,
      label: model.providerLabel,
      models: [],
    };
    group.models.push(model);
    groups.set(model.provider, group);
  }
  return [...groups.values()];
}
