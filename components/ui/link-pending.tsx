"use client";

import { useLinkStatus } from "next/link";
import { Spinner } from "./spinner";

/**
 * Inside a `Link`: a small spinner while the page it opens is still being read (after 200 ms,
 * so a fast one shows none), so a slow server does not look like a missed click or tap.
 */
export function LinkPending({ label }: { label: string }) {
  const { pending } = useLinkStatus();
  if (!pending) return null;
  return (
    <span role="status" className="flex shrink-0 animate-appear-late text-muted">
      <Spinner />
      <span className="sr-only">{label}</span>
    </span>
  );
}
