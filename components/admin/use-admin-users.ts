"use client";

import { useCallback, useRef, useState } from "react";
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

/** Loading the next page of the table: on its way, or what it failed with. */
export type MoreState = { running: boolean; error: string | null };

/** The list's address for a search (none: every account). */
function listUrl(search: string): string {
  const q = search.trim();
  return q ? `/api/admin/users?q=${encodeURIComponent(q)}` : "/api/admin/users";
}

/**
 * The Admin → Users table from GET /api/admin/users — the accounts that match `search`, a page
 * at a time (`more` adds the next one) — and every action on it.
 */
export function useAdminUsers(search: string) {
  const url = listUrl(search);
  const { state, setState, refresh, reload, wrote, loadingOther } =
    useAdminResource<AdminUserList>(url);
  /** `of`: the list address a failed page was of (its error is not another search's). */
  const [moreState, setMoreState] = useState<MoreState & { of?: string }>({
    running: false,
    error: null,
  });
  const moreOf = useRef<string | null>(null);
  const currentUrl = useRef(url);
  currentUrl.current = url;

  /** Adds the page after the ones shown; one a reload or a new search replaced is dropped. */
  const more = useCallback(async () => {
    if (state.status !== "ready" || state.next === null || moreOf.current !== null) return;
    const after = state.next;
    moreOf.current = after;
    setMoreState({ running: true, error: null });
    const sep = url.includes("?") ? "&" : "?";
    const result = await adminCall<AdminUserList>(`${url}${sep}after=${encodeURIComponent(after)}`);
    moreOf.current = null;
    // The search changed meanwhile: its own first page is what shows.
    if (currentUrl.current !== url) {
      setMoreState({ running: false, error: null });
      return;
    }
    if (!result.ok) {
      setMoreState({ running: false, error: result.message, of: url });
      return;
    }
    setMoreState({ running: false, error: null });
    setState((s) => {
      if (s.status !== "ready" || s.next !== after) return s;
      // An account that moved since the page before (approved, say) is shown once, where it was.
      const shown = new Set(s.users.map((u) => u.id));
      return {
        ...s,
        users: [...s.users, ...result.value.users.filter((u) => !shown.has(u.id))],
        total: result.value.total,
        next: result.value.next,
      };
    });
  }, [state, url, setState]);

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
        s.status === "ready"
          ? { ...s, users: s.users.filter((u) => u.id !== id), total: Math.max(0, s.total - 1) }
          : s,
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

  return {
    state,
    refresh,
    reload,
    /** Whether the table shown is of another search than `search`, and the new one is loading. */
    searching: loadingOther,
    more,
    moreState: {
      running: moreState.running,
      error: moreState.of === url ? moreState.error : null,
    } satisfies MoreState,
    update,
    resetUsage,
    remove,
    saveDefaults,
  };
}
