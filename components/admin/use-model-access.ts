"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import type { ModelAccessInput, ModelAccessView } from "@/lib/admin/model-access-input";
import { adminCall } from "./admin-fetch";

type State =
  | { status: "loading" }
  | { status: "error"; message: string }
  | { status: "ready"; access: ModelAccessView };

/**
 * The allow-list from GET /api/admin/models/access (again whenever `refreshKey` changes), and its
 * writer. A save answers with the whole list as it is after the write, so a load on its way then
 * (read before the write) is dropped: it would tick back what the admin just changed.
 */
export function useModelAccess(refreshKey: number) {
  const [state, setState] = useState<State>({ status: "loading" });
  const load = useRef<AbortController | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: refreshKey is the signal to refetch
  useEffect(() => {
    const controller = new AbortController();
    load.current = controller;
    adminCall<{ access: ModelAccessView }>("/api/admin/models/access", {
      signal: controller.signal,
    })
      .then((result) => {
        if (controller.signal.aborted) return;
        setState((current) =>
          result.ok
            ? { status: "ready", access: result.value.access }
            : // A failed refresh keeps the ticks on screen (the page says the refresh failed).
              current.status === "ready"
              ? current
              : { status: "error", message: result.message },
        );
      })
      .catch(() => undefined);
    return () => controller.abort();
  }, [refreshKey]);

  /** Saves one change; answers a message when it failed. */
  const save = useCallback(async (input: ModelAccessInput): Promise<string | null> => {
    const result = await adminCall<{ access: ModelAccessView }>("/api/admin/models/access", {
      method: "PUT",
      body: input,
    });
    if (!result.ok) return result.message;
    load.current?.abort();
    setState({ status: "ready", access: result.value.access });
    return null;
  }, []);

  return { state, save };
}
