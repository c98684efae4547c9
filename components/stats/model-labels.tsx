"use client";

import { createContext, type ReactNode, useContext, useMemo } from "react";
import type { PickableModel } from "../chat/use-models";

const ModelLabels = createContext<ReadonlyMap<string, string>>(new Map());

/** "GPT-4.1 (OpenAI)"; a label that starts with its provider's name ("Demo (offline)") stays as is. */
export function readableModelName(model: Pick<PickableModel, "label" | "providerLabel">): string {
  const { label, providerLabel } = model;
  return label === providerLabel || label.startsWith(`${providerLabel} `)
    ? label
    : `${label} (${providerLabel})`;
}

/** The names the stats popovers show instead of raw ids like `demo:demo`. */
export function ModelLabelsProvider({
  models,
  children,
}: {
  models: readonly PickableModel[];
  children: ReactNode;
}) {
  const labels = useMemo(
    () => new Map(models.map((m) => [m.id, readableModelName(m)] as const)),
    [models],
  );
  return <ModelLabels.Provider value={labels}>{children}</ModelLabels.Provider>;
}

/** A model's readable name; its id when the model is no longer offered. */
export function useModelLabel(modelId: string): string {
  return useContext(ModelLabels).get(modelId) ?? modelId;
}
