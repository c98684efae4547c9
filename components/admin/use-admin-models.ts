"use client";

import { useCallback } from "react";
import type { AdminModel } from "@/lib/admin/models";
import type { OverrideInput } from "@/lib/admin/override-input";
import { adminCall } from "./admin-fetch";
import { useAdminResource } from "./use-admin-resource";

const ENDPOINT = "/api/admin/models";

export type SaveResult = { ok: true; model: AdminModel } | { ok: false; message: string };

/** The admin's model table from GET /api/admin/models, and the override writer beside it. */
export function useAdminModels() {
  const { state, setState, version, refresh, reload } = useAdminResource<{
    models: AdminModel[];
  }>(ENDPOINT);

  const save = useCallback(
    async (input: OverrideInput): Promise<SaveResult> => {
      const result = await adminCall<{ model: AdminModel }>(ENDPOINT, {
        method: "PUT",
        body: input,
      });
      if (!result.ok) {
        // Another admin saved this model's override meanwhile: the table shows theirs.
        if (result.status === 409) reload();
        return result;
      }
      const { model } = result.value;
      setState((current) =>
        current.status === "ready"
          ? { ...current, models: current.models.map((m) => (m.id === model.id ? model : m)) }
          : current,
      );
      // Other rows may share a cached list or window with this one: refetch them all.
      reload();
      return { ok: true, model };
    },
    [reload, setState],
  );

  /** Forgets a model's observed window; answers a message when that failed. */
  const forget = useCallback(
    async (model: AdminModel): Promise<string | null> => {
      const result = await adminCall<unknown>(`${ENDPOINT}/observed`, {
        method: "DELETE",
        body: { provider: model.provider, model: model.model },
      });
      if (!result.ok) return result.message;
      reload();
      return null;
    },
    [reload],
  );

  return { state, version, refresh, reload, save, forget };
}
