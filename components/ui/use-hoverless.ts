"use client";

import { useSyncExternalStore } from "react";

/**
 * Whether the screen cannot hover (a phone, a tablet): a hover card never opens there, and its
 * keyboard has no Shift+Enter.
 */
export function useHoverless(): boolean {
  return useSyncExternalStore(
    (changed) => {
      const query = window.matchMedia("(hover: none)");
      query.addEventListener("change", changed);
      return () => query.removeEventListener("change", changed);
    },
    () => window.matchMedia("(hover: none)").matches,
    () => false,
  );
}
