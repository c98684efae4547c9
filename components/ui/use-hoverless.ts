"use client";

import { useSyncExternalStore } from "react";

const HOVERLESS = "(hover: none)";

/** Whether the screen cannot hover, read now (for an event handler or an effect). */
export const isHoverless = () => window.matchMedia(HOVERLESS).matches;

/**
 * Whether the screen cannot hover (a phone, a tablet): a hover card never opens there, and its
 * keyboard has no Shift+Enter.
 */
export function useHoverless(): boolean {
  return useSyncExternalStore(
    (changed) => {
      const query = window.matchMedia(HOVERLESS);
      query.addEventListener("change", changed);
      return () => query.removeEventListener("change", changed);
    },
    isHoverless,
    () => false,
  );
}
