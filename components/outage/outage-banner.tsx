"use client";

import { DatabaseZap } from "lucide-react";
import { useRouter } from "next/navigation";
import { useCallback } from "react";
import { useDatabaseOutage } from "./use-database-outage";

/** On every page: says so while Fold's database is unreachable, and refreshes when it is back. */
export function OutageBanner() {
  const router = useRouter();
  const { down } = useDatabaseOutage({
    onRecovered: useCallback(() => router.refresh(), [router]),
  });
  if (!down) return null;
  return (
    <div
      role="alert"
      className="fixed inset-x-0 top-0 z-50 flex items-center justify-center gap-2 bg-amber-100 px-4 py-2 text-sm text-amber-900"
    >
      <DatabaseZap size={16} aria-hidden />
      Fold can't reach its database right now. Retrying…
    </div>
  );
}
