"use client";

import { createContext, type ReactNode, useContext, useMemo } from "react";
import type { PickableModel } from "../chat/use-models";

type KnownModel = { name: string; contextWindow?: number };

const ModelLabels = createContext<ReadonlyMap<string, KnownModel>>(new Map());

/** "GPT-4.1 (OpenAI)"; a label that starts with its provider's name ("Demo (offline)") stays as is. */
export function readableModelName(model: Pick<PickableModel, "label" | "providerLabel">): string {
  const { label, providerLabel } = model;
  return label === providerLabel || label.startsWith(`${providerLabel} `)
    ? label
    : `${label} (${providerLabel})`;
}

/** The names the stats popovers show instead of raw ids like `demo:demo`, and each model's window. */
export function ModelLabelsProvider({
  models,
  children,
}: {
  models: readonly PickableModel[];
  children: ReactNode;
}) {
  const labels = useMemo(
    () =>
      new Map(
        models.map(
          (m) => [m.id, { name: readableModelName(m), contextWindow: m.contextWindow }] as const,
        ),
      ),
    [models],
  );
  return <ModelLabels.Provider value={labels}>{children}</ModelLabels.Provider>;
}

/** A model's readable name; its id when the model is no longer offered. */
export function useModelLabel(modelId: string): string {
  return useContext(ModelLabels).get(modelId)?.name ?? modelId;
}

/** A model's context window in tokens, when it is offered and its window known. */
export function useModelWindow(modelId: string): number | undefined {
  return useContext(ModelLabels).get(modelId)?.contextWindow;
}
