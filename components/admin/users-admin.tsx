"use client";

import { Search } from "lucide-react";
import { useEffect, useRef, useState } from "react";
import { USER_SEARCH_MAX_CHARS } from "@/lib/admin/user-input";
import { countOf } from "@/lib/count-text";
import type { RegistrationMode } from "@/lib/env";
import { buttonGhost, inputBase } from "../ui/styles";
import { AdminPage, REFRESH_FAILED } from "./admin-page";
import { LimitForm } from "./limit-form";
import { type ActionResult, useAdminUsers } from "./use-admin-users";
import { UserRow } from "./user-row";

const COLUMNS = ["Account", "Status", "Today", "Own limits", "Actions"] as const;

/** How long typing rests before the search is asked for. */
const SEARCH_PAUSE_MS = 250;

const REGISTRATION_TEXT: Record<RegistrationMode, string> = {
  open: "Anyone who reaches this server can create an account and chat at once.",
  approval: "New accounts wait here until you approve them.",
  closed: "No one can create an account; you can still manage the existing ones.",
};

/** Admin → Users (DESIGN §16): approve, disable, delete, promote, demote; quotas and usage. */
export function UsersAdmin({
  selfId,
  registration,
}: {
  selfId: string;
  registration: RegistrationMode;
}) {
  const [typed, setTyped] = useState("");
  const [search, setSearch] = useState("");
  useEffect(() => {
    const timer = setTimeout(() => setSearch(typed.trim()), SEARCH_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [typed]);
  const {
    state,
    refresh,
    reload,
    searching,
    shownSearch,
    more,
    moreState,
    update,
    resetUsage,
    remove,
    saveDefaults,
  } = useAdminUsers(search);
  // Accounts that wait for approval come first: they are what an admin comes here for.
  const users =
    state.status === "ready"
      ? [...state.users].sort(
          (a, b) => Number(b.status === "pending") - Number(a.status === "pending"),
        )
      : [];
  const rows = useRef<HTMLTableSectionElement>(null);

  /** Deletes an account; its row goes with the button that had focus, so the next row takes it. */
  async function removeUser(id: string): Promise<ActionResult> {
    const shown = [...(rows.current?.querySelectorAll<HTMLElement>("tr[data-user-id]") ?? [])];
    const at = shown.findIndex((row) => row.dataset.userId === id);
    const neighbour = shown[at + 1] ?? shown[at - 1];
    const problem = await remove(id);
    if (problem === null) neighbour?.querySelector<HTMLElement>("button:not(:disabled)")?.focus();
    return problem;
  }

  return (
    <AdminPage
      title="Users"
      intro={
        <p className="max-w-2xl text-sm text-muted">
          Registration is <strong className="font-medium text-ink">{registration}</strong>:{" "}
          {REGISTRATION_TEXT[registration]} Quotas count each user's messages and provider tokens
          per UTC day; a limit left empty takes the default.
        </p>
      }
      onRefresh={reload}
      refreshing={state.status === "loading" || refresh.running}
      failure={
        state.status === "error"
          ? { what: "The users could not be loaded.", message: state.message }
          : refresh.error
            ? { what: REFRESH_FAILED, message: refresh.error }
            : null
      }
    >
      {state.status === "ready" ? (
        <>
          <section className="space-y-2 rounded-2xl border border-line bg-white p-4 shadow-sm">
            <h2 className="text-sm font-semibold">Default daily limits</h2>
            <p className="text-xs text-muted">
              Every user without limits of their own. Leave a field empty for no limit.
            </p>
            <LimitForm
              label="Default limits"
              values={state.defaults}
              placeholders={{ dailyMessageLimit: "no limit", dailyTokenLimit: "no limit" }}
              onSave={saveDefaults}
            />
          </section>
          <div className="flex flex-wrap items-center justify-between gap-3">
            <label className="relative block w-full max-w-sm">
              <span className="sr-only">Search accounts</span>
              <Search
                size={16}
                aria-hidden
                className="pointer-events-none absolute top-1/2 left-3 -translate-y-1/2 text-muted"
              />
              <input
                type="search"
                value={typed}
                onChange={(event) => setTyped(event.target.value)}
                onKeyDown={(event) => {
                  if (event.key === "Enter") setSearch(typed.trim());
                }}
                maxLength={USER_SEARCH_MAX_CHARS}
                placeholder="Search by name or email"
                className={`${inputBase} pl-9`}
              />
            </label>
            <p role="status" className="text-sm text-muted">
              {searching ? "Searching…" : shownText(users.length, state.total, shownSearch)}
            </p>
          </div>
          {/* Below md each account's row stacks its cells, so its actions stay on the screen
              rather than past the right edge of a table scrolled sideways. */}
          <div className="overflow-x-auto rounded-2xl border border-line bg-white shadow-sm">
            <table className="block w-full text-sm md:table" aria-busy={searching}>
              <caption className="sr-only">Accounts</caption>
              <thead className="sr-only border-b border-line bg-zinc-50 text-left text-xs text-muted md:not-sr-only md:table-header-group">
                <tr>
                  {COLUMNS.map((label) => (
                    <th
                      key={label}
                      scope="col"
                      className={`py-2.5 pr-4 font-medium ${label === "Account" ? "pl-4" : ""}`}
                    >
                      {label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody ref={rows} className="block divide-y divide-line md:table-row-group">
                {users.map((user) => (
                  <UserRow
                    key={user.id}
                    user={user}
                    isSelf={user.id === selfId}
                    defaults={state.defaults}
                    onUpdate={(patch) => update(user.id, patch)}
                    onResetUsage={() => resetUsage(user.id)}
                    onDelete={() => removeUser(user.id)}
                  />
                ))}
                {users.length === 0 ? (
                  <tr className="block md:table-row">
                    <td
                      colSpan={COLUMNS.length}
                      className="block px-4 py-6 text-center text-muted md:table-cell"
                    >
                      {shownSearch ? `No account matches “${shownSearch}”.` : "No accounts."}
                    </td>
                  </tr>
                ) : null}
              </tbody>
            </table>
          </div>
          {state.next !== null ? (
            <div className="flex flex-col items-center gap-2">
              <button
                type="button"
                // Keeps focus while it loads (a disabled button drops it to the page).
                onClick={moreState.running ? undefined : () => void more()}
                aria-disabled={moreState.running}
                className={buttonGhost}
              >
                {moreState.running ? "Loading…" : "Show more accounts"}
              </button>
              {moreState.error ? (
                <p role="alert" className="text-sm text-red-700">
                  More accounts could not be loaded: {moreState.error}
                </p>
              ) : null}
            </div>
          ) : null}
        </>
      ) : state.status === "loading" ? (
        <p role="status" className="text-sm text-muted">
          Loading users…
        </p>
      ) : null}
    </AdminPage>
  );
}

/** "12 accounts", "Showing 100 of 2,340 accounts", "2 accounts match “ada”". */
function shownText(shown: number, total: number, search: string): string {
  const of = (n: number) => countOf(n, "account");
  if (shown < total) return `Showing ${shown.toLocaleString("en-US")} of ${of(total)}`;
  return search ? `${of(total)} ${total === 1 ? "matches" : "match"} “${search}”` : of(total);
}
