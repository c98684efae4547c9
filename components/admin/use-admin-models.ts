"use client";

import { useCallback, useEffect, useState } from "react";
import type { AdminModel } from "@/lib/admin/models";
import type { OverrideInput } from "@/lib/admin/override-input";

const ENDPOINT = "/api/admin/models";
const OFFLINE_MESSAGE = "Could not reach Fold. Check your connection and try again.";

type State =
  | { status: "loading" }
  | { status: "error"; message: string }
  | { status: "ready"; models: AdminModel[] };

export type SaveResult = { ok: true; model: AdminModel } | { ok: false; message: string };

/** The admin's model table from GET /api/admin/models, and the override writer beside it. */
export function useAdminModels() {
  const [state, setState] = useState<State>({ status: "loading" });
  const [version, setVersion] = useState(0);
  // A refresh of a table already shown: running, or what it failed with (the table stays).
  const [refresh, setRefresh] = useState<{ running: boolean; error: string | null }>({
    running: false,
    error: null,
  });

  // biome-ignore lint/correctness/useExhaustiveDependencies: version is the signal to refetch
  useEffect(() => {
    const controller = new AbortController();
    fetch(ENDPOINT, { signal: controller.signal, cache: "no-store" })
      .then(async (response) => {
        if (!response.ok) throw new Error(await errorMessage(response));
        const { models } = (await response.json()) as { models: AdminModel[] };
        setState({ status: "ready", models });
        setRefresh({ running: false, error: null });
      })
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        const message = error instanceof TypeError ? OFFLINE_MESSAGE : messageOf(error);
        // A failed refresh keeps the table on screen; only a first load shows the error page.
        setState((current) =>
          current.status === "ready" ? current : { status: "error", message },
        );
        setRefresh({ running: false, error: message });
      });
    return () => controller.abort();
  }, [version]);

  const reload = useCallback(() => {
    setState((current) => (current.status === "error" ? { status: "loading" } : current));
    setRefresh({ running: true, error: null });
    setVersion((v) => v + 1);
  }, []);

  const save = useCallback(
    async (input: OverrideInput): Promise<SaveResult> => {
      let response: Response;
      try {
        response = await fetch(ENDPOINT, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(input),
        });
      } catch {
        return { ok: false, message: OFFLINE_MESSAGE };
      }
      if (!response.ok) return { ok: false, message: await errorMessage(response) };
      const { model } = (await response.json()) as { model: AdminModel };
      setState((current) =>
        current.status === "ready"
          ? { ...current, models: current.models.map((m) => (m.id === model.id ? model : m)) }
          : current,
      );
      // Other rows may share a cached list or window with this one: refetch them all.
      reload();
      return { ok: true, model };
    },
    [reload],
  );

  /** Forgets a model's observed window; answers a message when that failed. */
  const forget = useCallback(
    async (model: AdminModel): Promise<string | null> => {
      let response: Response;
      try {
        response = await fetch(`${ENDPOINT}/observed`, {
          method: "DELETE",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ provider: model.provider, model: model.model }),
        });
      } catch {
        return OFFLINE_MESSAGE;
      }
      if (!response.ok) return errorMessage(response);
      reload();
      return null;
    },
    [reload],
  );

  return { state, version, refresh, reload, save, forget };
}

/** The server's own message (`{ error: { message } }`), or the status when there is none. */
async function errorMessage(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { error?: { message?: string } };
    if (body.error?.message) return body.error.message;
  } catch {
    // Not JSON: fall through to the status.
  }
  return `The server answered ${response.status}.`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : "Could not load the models.";
}
