"use client";

import { ArrowLeft, RefreshCw } from "lucide-react";
import Link from "next/link";
import type { ReactNode } from "react";
import { buttonGhost } from "../ui/styles";

/** A refresh that failed while the table was on screen: the table stays as it was loaded. */
export const REFRESH_FAILED = "Refresh failed: the table shows what was loaded before.";

/**
 * The frame every admin page shares: the way back to the chats, the page's title and what it
 * is for, Refresh, and — when the page's data could not be loaded — what failed, with Try
 * again. The page's own content goes below.
 */
export function AdminPage({
  title,
  intro,
  onRefresh,
  refreshing,
  failure,
  children,
}: {
  title: string;
  /** A paragraph or two under the title. */
  intro: ReactNode;
  onRefresh: () => void;
  refreshing: boolean;
  /** What could not be loaded ("The users could not be loaded.") and why; null when loaded. */
  failure: { what: string; message: string } | null;
  children: ReactNode;
}) {
  return (
    <div className="h-full overflow-y-auto bg-panel">
      <div className="mx-auto max-w-7xl space-y-6 px-6 py-8">
        <Link href="/" className={`${buttonGhost} -ml-3`}>
          <ArrowLeft size={16} />
          Back to chats
        </Link>
        <header className="flex flex-wrap items-end justify-between gap-4">
          <div className="space-y-1">
            <p className="text-xs font-semibold uppercase tracking-widest text-accent">Admin</p>
            <h1 className="text-2xl font-semibold tracking-tight">{title}</h1>
            {intro}
          </div>
          <button
            type="button"
            // Keeps focus while it loads (a disabled button drops it to the page).
            onClick={refreshing ? undefined : onRefresh}
            aria-disabled={refreshing}
            className={buttonGhost}
          >
            <RefreshCw size={16} />
            Refresh
          </button>
        </header>
        {failure ? (
          <div
            role="alert"
            className="flex items-start justify-between gap-4 rounded-2xl border border-red-200 bg-red-50 p-4 text-sm text-red-800"
          >
            <div>
              <p className="font-medium">{failure.what}</p>
              <p>{failure.message}</p>
            </div>
            <button type="button" onClick={onRefresh} className={buttonGhost}>
              Try again
            </button>
          </div>
        ) : null}
        {children}
      </div>
    </div>
  );
}
