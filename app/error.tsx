"use client";

import { useRouter } from "next/navigation";
import { useCallback } from "react";
import { useDatabaseOutage } from "@/components/outage/use-database-outage";

type Props = { error: Error & { digest?: string }; reset: () => void };

/**
 * A page that failed to render. Usually the database is down: say so and retry until it is
 * back; otherwise show the digest, which finds the server's log line.
 */
export default function ErrorPage({ error, reset }: Props) {
  const router = useRouter();
  const recovered = useCallback(() => {
    router.refresh();
    reset();
  }, [router, reset]);
  const { down, checking } = useDatabaseOutage({ checkNow: true, onRecovered: recovered });

  return (
    <div className="flex h-full flex-col items-center justify-center gap-3 px-6 text-center">
      <title>{down ? "Database unreachable · Fold" : "Error · Fold"}</title>
      {down ? (
        <>
          <h1 className="text-lg font-semibold">Fold can't reach its database</h1>
          <p className="max-w-md text-sm text-muted">
            Retrying every few seconds; this page comes back by itself once it answers.
          </p>
        </>
      ) : checking ? null : (
        <>
          <h1 className="text-lg font-semibold">Something went wrong on Fold's side</h1>
          <p className="max-w-md text-sm text-muted">
            {error.digest ? `Error id ${error.digest}. ` : ""}Try again; if it keeps happening, give
            an admin the error id.
          </p>
          <button type="button" onClick={recovered} className="text-sm font-medium underline">
            Try again
          </button>
        </>
      )}
    </div>
  );
}
