"use client";

import { useEffect, useRef, useState } from "react";
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

/** After a failed load, the next one waits this long, doubling up to the last. */
const RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 15_000];

/**
 * The models the signed-in user can pick, from GET /api/models. A load that fails (a network
 * blip, a restart) is tried again on its own, sooner first, so the composer never stays
 * disabled once Fold answers again; an outage's end (503) loads at once.
 */
export function useModels(): State {
  const [state, setState] = useState<State>({ status: "loading" });
  const [attempt, setAttempt] = useState(0);
  // Failures in a row: the next try waits longer after each, and not at all after a success.
  const failures = useRef(0);
  const recovered = useRecoveryKey();
  // biome-ignore lint/correctness/useExhaustiveDependencies: `recovered` and `attempt` are the signals to load again
  useEffect(() => {
    let cancelled = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    apiFetch("/api/models")
      .then(async (response) => {
        if (!response.ok) {
          // Refused (signed out in another tab, say): asking again would not help.
          if (response.status < 500 && ![408, 429].includes(response.status)) {
            throw Object.assign(new Error(`Could not load models (${response.status})`), {
              final: true,
            });
          }
          throw new Error(`Could not load models (${response.status})`);
        }
        return (await response.json()) as {
          models: PickableModel[];
          defaultModelId: string | null;
        };
      })
      .then((body) => {
        if (cancelled) return;
        failures.current = 0;
        setState({ status: "ready", models: body.models, defaultModelId: body.defaultModelId });
      })
      .catch((error: unknown) => {
        if (cancelled) return;
        const message = error instanceof Error ? error.message : "Could not load models";
        if ((error as { final?: boolean }).final) {
          setState({ status: "error", message });
          return;
        }
        setState({ status: "error", message: `${message}; trying again…` });
        const delay = RETRY_DELAYS_MS[Math.min(failures.current, RETRY_DELAYS_MS.length - 1)];
        failures.current += 1;
        retry = setTimeout(() => setAttempt((n) => n + 1), delay);
      });
    return () => {
      cancelled = true;
      clearTimeout(retry);
    };
  }, [recovered, attempt]);
  return state;
}
