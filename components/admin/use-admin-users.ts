"use client";

import { useCallback } from "react";
import type {
  QuotaDefaultsInput,
  QuotaDefaultsPatchInput,
  UserPatchInput,
} from "@/lib/admin/user-input";
import type { AdminUser, AdminUserList } from "@/lib/admin/users";
import { adminCall } from "./admin-fetch";
import { useAdminResource } from "./use-admin-resource";

/** A failed action's message, or null when it worked. */
export type ActionResult = string | null;

/** The Admin → Users table from GET /api/admin/users, and every action on it. */
export function useAdminUsers() {
  const { state, setState, refresh, reload, wrote } =
    useAdminResource<AdminUserList>("/api/admin/users");

  const replace = useCallback(
    (user: AdminUser) => {
      setState((s) =>
        s.status === "ready"
          ? { ...s, users: s.users.map((u) => (u.id === user.id ? user : u)) }
          : s,
      );
      wrote();
    },
    [setState, wrote],
  );

  const update = useCallback(
    async (id: string, patch: UserPatchInput): Promise<ActionResult> => {
      const result = await adminCall<{ user: AdminUser }>(`/api/admin/users/${id}`, {
        method: "PATCH",
        body: patch,
      });
      if (!result.ok) {
        // Another admin changed the account: the table shows it as it is now.
        if (result.status === 409) reload();
        return result.message;
      }
      replace(result.value.user);
      return null;
    },
    [replace, reload],
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

  const remove = useCallback(
    async (id: string): Promise<ActionResult> => {
      const result = await adminCall<void>(`/api/admin/users/${id}`, { method: "DELETE" });
      if (!result.ok) return result.message;
      setState((s) =>
        s.status === "ready" ? { ...s, users: s.users.filter((u) => u.id !== id) } : s,
      );
      wrote();
      return null;
    },
    [setState, wrote],
  );

  const saveDefaults = useCallback(
    async (changed: QuotaDefaultsPatchInput): Promise<ActionResult> => {
      const result = await adminCall<{ defaults: QuotaDefaultsInput }>("/api/admin/quotas", {
        method: "PATCH",
        body: changed,
      });
      if (!result.ok) return result.message;
      setState((s) => (s.status === "ready" ? { ...s, defaults: result.value.defaults } : s));
      wrote();
      return null;
    },
    [setState, wrote],
  );

  return { state, refresh, reload, update, resetUsage, remove, saveDefaults };
}
