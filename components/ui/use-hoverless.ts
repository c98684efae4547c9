"use client";

import { useSyncExternalStore } from "react";

const HOVERLESS = "(hover: none)";
/** Narrower than Tailwind's `sm`: a phone, or a desktop window made that narrow. */
const NARROW = "(max-width: 639px)";

/** Whether the screen cannot hover, read now (for an event handler or an effect). */
export const isHoverless = () => window.matchMedia(HOVERLESS).matches;

/** Whether a media query matches, kept as it changes; false while rendered on the server. */
function useMediaQuery(media: string): boolean {
  return useSyncExternalStore(
    (changed) => {
      const query = window.matchMedia(media);
      query.addEventListener("change", changed);
      return () => query.removeEventListener("change", changed);
    },
    () => window.matchMedia(media).matches,
    () => false,
  );
}

/**
 * Whether the screen cannot hover (a phone, a tablet): a hover card never opens there, and its
 * keyboard has no Shift+Enter.
 */
export function useHoverless(): boolean {
  return useMediaQuery(HOVERLESS);
}

/** Whether the window is phone-narrow: a one-line hint there leaves out what does not fit. */
export function useNarrow(): boolean {
  return useMediaQuery(NARROW);
}
