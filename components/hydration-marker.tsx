"use client";

import { useEffect } from "react";

/** Marks the page as interactive; end-to-end tests wait for it before clicking. */
export function HydrationMarker() {
  useEffect(() => {
    document.documentElement.dataset.hydrated = "true";
  }, []);
  return null;
}
