"use client";

import { useLinkStatus } from "next/link";
import { Spinner } from "./spinner";

/**
 * Inside a `Link`: a small spinner while the page it opens is still being read (after 200 ms,
 * so a fast one shows none), so a slow server does not look like a missed click or tap. The
 * status region is there, empty, before the click (screen readers announce what comes into a
 * region they already know, and may skip one that arrives filled); empty, it is `sr-only`, out
 * of the row's flex layout, so it adds no gap.
 */
export function LinkPending({ label }: { label: string }) {
  const { pending } = useLinkStatus();
  return (
    <span
      role="status"
      className={pending ? "flex shrink-0 animate-appear-late text-muted" : "sr-only"}
    >
      {pending ? (
        <>
          <Spinner />
          <span className="sr-only">{label}</span>
        </>
      ) : null}
    </span>
  );
}
