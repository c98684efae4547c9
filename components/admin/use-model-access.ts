"use client";

import { useCallback, useEffect, useState } from "react";
import type { ModelAccessInput, ModelAccessView } from "@/lib/admin/model-access-input";
import { adminCall } from "./admin-fetch";

type State =
  | { status: "loading" }
  | { status: "error"; message: string }
  | { status: "ready"; access: ModelAccessView };

/** The allow-list from GET /api/admin/models/access, and its writer. */
export function useModelAccess() {
  const [state, setState] = useState<State>({ status: "loading" });

  useEffect(() => {
    const controller = new AbortController();
    adminCall<{ access: ModelAccessView }>("/api/admin/models/access", {
      signal: controller.signal,
    })
      .then((result) =>
        setState(
          result.ok
            ? { status: "ready", access: result.value.access }
            : { status: "error", message: result.message },
        ),
      )
      .catch(() => undefined);
    return () => controller.abort();
  }, []);

  /** Saves one change; answers a message when it failed. */
  const save = useCallback(async (input: ModelAccessInput): Promise<string | null> => {
    const result = await adminCall<{ access: ModelAccessView }>("/api/admin/models/access", {
      method: "PUT",
      body: input,
    });
    if (!result.ok) return result.message;
    setState({ status: "ready", access: result.value.access });
    return null;
  }, []);

  return { state, save };
}
