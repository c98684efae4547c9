"use client";

import { useCallback, useRef, useState } from "react";
import {
  type QuotaDefaultsInput,
  type QuotaDefaultsPatchInput,
  USERS_PAGE_MAX,
  type UserPatchInput,
} from "@/lib/admin/user-input";
import type { AdminUser, AdminUserList } from "@/lib/admin/users";
import { adminCall, type Result } from "./admin-fetch";
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

/** The search a list address is of ("" for every account). */
function searchOf(url: string): string {
  return new URL(url, "http://list").searchParams.get("q") ?? "";
}

/** The page of `url`'s list after cursor `after`, of at most `limit` accounts (none: the server's page). */
function pageUrl(url: string, after: string, limit?: number): string {
  const sep = url.includes("?") ? "&" : "?";
  const size = limit === undefined ? "" : `&limit=${limit}`;
  return `${url}${sep}after=${encodeURIComponent(after)}${size}`;
}

/** Adds a next page's accounts to a list; one that moved since the page before is shown once, where it was. */
function withPage(list: AdminUserList, page: AdminUserList): AdminUserList {
  const shown = new Set(list.users.map((u) => u.id));
  return { ...page, users: [...list.users, ...page.users.filter((u) => !shown.has(u.id))] };
}

/**
 * Reads `url`'s list again as far as `wanted` accounts, a page after another: a refresh keeps
 * the pages Show more added. Fails whole when one page does (the table shown stays).
 */
async function readList(
  url: string,
  wanted: number,
  signal: AbortSignal,
): Promise<Result<AdminUserList>> {
  const first = await adminCall<AdminUserList>(url, { signal });
  if (!first.ok) return first;
  let list = first.value;
  while (list.next !== null && list.users.length < wanted) {
    // One more than shown: a last page that comes back full would offer Show more of nothing.
    const limit = Math.min(USERS_PAGE_MAX, wanted - list.users.length + 1);
    const page = await adminCall<AdminUserList>(pageUrl(url, list.next, limit), { signal });
    if (!page.ok) return page;
    list = withPage(list, page.value);
  }
  return { ok: true, value: list };
}

/**
 * The Admin → Users table from GET /api/admin/users — the accounts that match `search`, a page
 * at a time (`more` adds the next one) — and every action on it.
 */
export function useAdminUsers(search: string) {
  const url = listUrl(search);
  /** How many accounts of which list the table shows: a reload of that list reads as many. */
  const shown = useRef<{ url: string; count: number } | null>(null);
  const load = useCallback(
    (of: string, signal: AbortSignal) =>
      readList(of, shown.current?.url === of ? shown.current.count : 0, signal),
    [],
  );
  const { state, setState, refresh, reload, wrote, loadingOther, loadedUrl } =
    useAdminResource<AdminUserList>(url, load);
  shown.current =
    state.status === "ready" && loadedUrl !== null
      ? { url: loadedUrl, count: state.users.length }
      : null;
  /** `of`: the list address a failed page was of (its error is not another search's). */
  const [moreState, setMoreState] = useState<MoreState & { of?: string }>({
    running: false,
    error: null,
  });
  const moreOf = useRef<string | null>(null);
  const currentUrl = useRef(url);
  currentUrl.current = url;

  /**
   * Adds the page after the ones shown, of the list shown (a search that failed left another's);
   * one a reload or a new search replaced is dropped.
   */
  const more = useCallback(async () => {
    if (state.status !== "ready" || state.next === null || moreOf.current !== null) return;
    if (loadedUrl === null) return;
    const after = state.next;
    moreOf.current = after;
    setMoreState({ running: true, error: null });
    const result = await adminCall<AdminUserList>(pageUrl(loadedUrl, after));
    moreOf.current = null;
    // The search changed meanwhile: its own first page is what shows.
    if (currentUrl.current !== url) {
      setMoreState({ running: false, error: null });
      return;
    }
    if (!result.ok) {
      setMoreState({ running: false, error: result.message, of: loadedUrl });
      return;
    }
    setMoreState({ running: false, error: null });
    setState((s) =>
      s.status !== "ready" || s.next !== after
        ? s
        : { ...s, ...withPage(s, result.value), defaults: s.defaults },
    );
  }, [state, url, loadedUrl, setState]);

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
    /** The search the table shown is of: another than `search` while one loads or after one failed. */
    shownSearch: loadedUrl === null ? search.trim() : searchOf(loadedUrl),
    more,
    moreState: {
      running: moreState.running,
      error: moreState.of === loadedUrl ? moreState.error : null,
    } satisfies MoreState,
    update,
    resetUsage,
    remove,
    saveDefaults,
  };
}
