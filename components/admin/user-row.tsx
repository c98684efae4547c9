"use client";

import { useEffect, useRef, useState } from "react";
import type { UserPatchInput } from "@/lib/admin/user-input";
import type { AdminUser } from "@/lib/admin/users";
import { formatCount } from "@/lib/count-text";
import type { QuotaLimits } from "@/lib/limits/quota";
import { buttonGhost, buttonPrimary } from "../ui/styles";
import { LimitForm } from "./limit-form";
import { STACKED_CELL } from "./stacked-cell";
import type { ActionResult } from "./use-admin-users";

type Props = {
  user: AdminUser;
  isSelf: boolean;
  defaults: QuotaLimits;
  onUpdate: (patch: UserPatchInput) => Promise<ActionResult>;
  onResetUsage: () => Promise<ActionResult>;
  onDelete: () => Promise<ActionResult>;
};

const STATUS_BADGES: Record<AdminUser["status"], { text: string; className: string }> = {
  pending: { text: "waiting", className: "bg-amber-50 text-amber-800 ring-amber-200" },
  active: { text: "active", className: "bg-emerald-50 text-emerald-700 ring-emerald-200" },
  disabled: { text: "disabled", className: "bg-zinc-100 text-zinc-500 ring-zinc-200" },
};

/** One account: who, its status and role, today's usage against its limits, and what to do. */
export function UserRow({ user, isSelf, defaults, onUpdate, onResetUsage, onDelete }: Props) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  // The button clicked goes as the other appears: focus follows, to Keep (the safe one) when
  // asked to confirm and back to Delete when kept. Not on the first render.
  const deleteButton = useRef<HTMLButtonElement>(null);
  const keepButton = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);
  useEffect(() => {
    if (confirmDelete) asked.current = true;
    if (!asked.current) return;
    (confirmDelete ? keepButton : deleteButton).current?.focus();
  }, [confirmDelete]);
  const badge = STATUS_BADGES[user.status];

  // While an action runs its buttons say so (aria-disabled) but keep focus: a disabled button
  // drops it to the page. One that goes with the action (Approve) hands it to the account's
  // cell, not to another action (the next Enter would Disable the account just approved).
  const row = useRef<HTMLTableRowElement>(null);
  const account = useRef<HTMLTableCellElement>(null);
  const refocus = useRef(false);
  async function run(action: () => Promise<ActionResult>) {
    if (busy) return;
    refocus.current = row.current?.contains(document.activeElement) ?? false;
    setBusy(true);
    setError(await action());
    setBusy(false);
  }
  useEffect(() => {
    if (busy || !refocus.current) return;
    refocus.current = false;
    if (row.current?.contains(document.activeElement)) return;
    account.current?.focus();
  }, [busy]);

  return (
    <tr
      ref={row}
      data-user-email={user.email}
      data-user-id={user.id}
      className="flex flex-wrap gap-x-4 gap-y-2 p-4 align-top md:table-row md:p-0"
    >
      <td
        ref={account}
        tabIndex={-1}
        className="block w-full outline-none [overflow-wrap:anywhere] focus-visible:ring-2 focus-visible:ring-zinc-500 md:table-cell md:w-auto md:min-w-52 md:py-3 md:pr-4 md:pl-4"
      >
        {/* A name or address of one long word wraps anywhere: the row's actions stay in view.
            Wrapping anywhere lets the table squeeze the column to a letter, so it keeps a
            minimum width: a short address stays on one line. */}
        <p className="font-medium">
          {user.name}
          {isSelf ? <span className="ml-1 text-xs font-normal text-muted">(you)</span> : null}
        </p>
        <p className="text-xs text-muted" data-testid="user-email">
          {user.email}
        </p>
      </td>
      <td className="block md:table-cell md:py-3 md:pr-4">
        <span
          data-testid="user-status"
          className={`inline-flex rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${badge.className}`}
        >
          {badge.text}
        </span>
        <p className="mt-1 text-xs text-zinc-600" data-testid="user-role">
          {user.role}
        </p>
      </td>
      <td
        className={`${STACKED_CELL} text-xs tabular-nums text-zinc-700`}
        data-label="Today"
        data-testid="user-usage"
      >
        <p>
          {usageText(
            user.usageToday.messages,
            user.limits.dailyMessageLimit ?? defaults.dailyMessageLimit,
            "messages",
          )}
        </p>
        <p>
          {usageText(
            user.usageToday.tokens,
            user.limits.dailyTokenLimit ?? defaults.dailyTokenLimit,
            "tokens",
          )}
        </p>
      </td>
      <td className={`${STACKED_CELL} w-full md:w-auto`} data-label="Own limits">
        <LimitForm
          label={`Limits for ${user.email}`}
          values={user.limits}
          placeholders={{
            dailyMessageLimit: `default (${limitText(defaults.dailyMessageLimit)})`,
            dailyTokenLimit: `default (${limitText(defaults.dailyTokenLimit)})`,
          }}
          onSave={(limits) => onUpdate(limits)}
        />
      </td>
      <td className="block w-full md:table-cell md:w-auto md:py-3 md:pr-4">
        <div className="flex flex-wrap gap-1">
          {user.status === "pending" ? (
            <button
              type="button"
              aria-disabled={busy}
              onClick={() => run(() => onUpdate({ status: "active", from: "pending" }))}
              className={`${buttonPrimary} px-3 py-1.5`}
            >
              Approve
            </button>
          ) : null}
          {isSelf ? null : (
            <>
              {user.status === "disabled" ? (
                <button
                  type="button"
                  aria-disabled={busy}
                  onClick={() => run(() => onUpdate({ status: "active", from: "disabled" }))}
                  className={buttonGhost}
                >
                  Enable
                </button>
              ) : (
                <button
                  type="button"
                  aria-disabled={busy}
                  onClick={() => run(() => onUpdate({ status: "disabled", from: user.status }))}
                  className={buttonGhost}
                >
                  Disable
                </button>
              )}
              <button
                type="button"
                aria-disabled={busy}
                onClick={() =>
                  run(() => onUpdate({ role: user.role === "admin" ? "user" : "admin" }))
                }
                className={buttonGhost}
              >
                {user.role === "admin" ? "Make user" : "Make admin"}
              </button>
            </>
          )}
          <button
            type="button"
            aria-disabled={busy}
            onClick={() => run(onResetUsage)}
            className={buttonGhost}
          >
            Reset usage
          </button>
          {isSelf ? null : confirmDelete ? (
            <>
              <button
                type="button"
                aria-disabled={busy}
                onClick={() => run(onDelete)}
                className={`${buttonGhost} text-red-700 hover:bg-red-50`}
              >
                Delete {user.email} and their chats
              </button>
              <button
                ref={keepButton}
                type="button"
                onClick={() => setConfirmDelete(false)}
                className={buttonGhost}
              >
                Keep
              </button>
            </>
          ) : (
            <button
              ref={deleteButton}
              type="button"
              aria-disabled={busy}
              onClick={() => {
                if (!busy) setConfirmDelete(true);
              }}
              className={`${buttonGhost} text-red-700 hover:bg-red-50`}
            >
              Delete
            </button>
          )}
        </div>
        {error ? (
          <p role="alert" className="mt-1 text-xs text-red-700">
            {error}
          </p>
        ) : null}
      </td>
    </tr>
  );
}

function limitText(limit: number | null): string {
  return limit === null ? "no limit" : formatCount(limit);
}

/** Today's use against its limit: "16 / 100 messages", or "16 messages (no limit)". */
export function usageText(used: number, limit: number | null, unit: string): string {
  return limit === null
    ? `${formatCount(used)} ${unit} (no limit)`
    : `${formatCount(used)} / ${formatCount(limit)} ${unit}`;
}
