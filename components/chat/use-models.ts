"use client";

import { useEffect, useState } from "react";
import { apiFetch } from "../outage/api-fetch";
import { useRecoveryKey } from "../outage/use-database-outage";

export type PickableModel = {
  id: string;
  label: string;
  providerLabel: string;
  contextWindow?: number;
};

type State =
  | { status: "loading" }
  | { status: "error"; message: string }
  | { status: "ready"; models: PickableModel[]; defaultModelId: string | null };

/** The models the signed-in user can pick, from GET /api/models. */
export function useModels(): State {
  const [state, setState] = useState<State>({ status: "loading" });
  const recovered = useRecoveryKey();
  // biome-ignore lint/correctness/useExhaustiveDependencies: `recovered` is the signal to load again
  useEffect(() => {
    let cancelled = false;
    apiFetch("/api/models")
      .then(async (response) => {
        if (!response.ok) throw new Error(`Could not load models (${response.status})`);
        return (await response.json()) as {
          models: PickableModel[];
          defaultModelId: string | null;
        };
      })
      .then((body) => {
        if (!cancelled)
          setState({ status: "ready", models: body.models, defaultModelId: body.defaultModelId });
      })
      .catch((error: unknown) => {
        if (!cancelled)
          setState({
            status: "error",
            message: error instanceof Error ? error.message : "Could not load models",
          });
      });
    return () => {
      cancelled = true;
    };
  }, [recovered]);
  return state;
}
