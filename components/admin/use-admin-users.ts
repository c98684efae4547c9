"use client";

import { useCallback, useEffect, useState } from "react";
import type { QuotaDefaultsInput, UserPatchInput } from "@/lib/admin/user-input";
import type { AdminUser, AdminUserList } from "@/lib/admin/users";
import { adminCall } from "./admin-fetch";

type State =
  | { status: "loading" }
  | { status: "error"; message: string }
  | ({ status: "ready" } & AdminUserList);

/** A failed action's message, or null when it worked. */
export type ActionResult = string | null;

/** The Admin → Users table from GET /api/admin/users, and every action on it. */
export function useAdminUsers() {
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
    adminCall<AdminUserList>("/api/admin/users", { signal: controller.signal })
      .then((result) => {
        if (result.ok) setState({ status: "ready", ...result.value });
        else
          setState((s) =>
            s.status === "ready" ? s : { status: "error", message: result.message },
          );
        setRefresh({ running: false, error: result.ok ? null : result.message });
      })
      .catch(() => undefined);
    return () => controller.abort();
  }, [version]);

  const reload = useCallback(() => {
    setRefresh({ running: true, error: null });
    setVersion((v) => v + 1);
  }, []);

  const replace = useCallback((user: AdminUser) => {
    setState((s) =>
      s.status === "ready" ? { ...s, users: s.users.map((u) => (u.id === user.id ? user : u)) } : s,
    );
  }, []);

  const update = useCallback(
    async (id: string, patch: UserPatchInput): Promise<ActionResult> => {
      const result = await adminCall<{ user: AdminUser }>(`/api/admin/users/${id}`, {
        method: "PATCH",
        body: patch,
      });
      if (!result.ok) return result.message;
      replace(result.value.user);
      return null;
    },
    [replace],
  );

  const resetUsage = useCallback(
    async (id: string): Promise<ActionResult> => {
      const result = await adminCall<{ user: AdminUser }>(`/api/admin/users/${id}/usage`, {
        method: "DELETE",
      });
      if (!result.ok) return result.message;
      replace(result.value.user);
      return null;
    },
    [replace],
  );

  const remove = useCallback(async (id: string): Promise<ActionResult> => {
    const result = await adminCall<void>(`/api/admin/users/${id}`, { method: "DELETE" });
    if (!result.ok) return result.message;
    setState((s) =>
      s.status === "ready" ? { ...s, users: s.users.filter((u) => u.id !== id) } : s,
    );
    return null;
  }, []);

  const saveDefaults = useCallback(async (defaults: QuotaDefaultsInput): Promise<ActionResult> => {
    const result = await adminCall<{ defaults: QuotaDefaultsInput }>("/api/admin/quotas", {
      method: "PUT",
      body: defaults,
    });
    if (!result.ok) return result.message;
    setState((s) => (s.status === "ready" ? { ...s, defaults: result.value.defaults } : s));
    return null;
  }, []);

  return { state, refresh, reload, update, resetUsage, remove, saveDefaults };
}
