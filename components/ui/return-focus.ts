"use client";

import { useRef } from "react";
import { focusComposer } from "../chat/skip-link";

/**
 * Focus handlers for a dialog opened by state rather than by a Radix trigger, which Radix
 * would otherwise send to <body> on close: the focus goes back to where it was when the
 * dialog opened, if that is still on the page and usable, else to the message box.
 */
export function useReturnFocus() {
  const openedFrom = useRef<Element | null>(null);
  return {
    onOpenAutoFocus: () => {
      openedFrom.current = document.activeElement;
    },
    onCloseAutoFocus: (event: Event) => {
      event.preventDefault();
      const from = openedFrom.current;
      openedFrom.current = null;
      requestAnimationFrame(() => {
        const usable =
          from instanceof HTMLElement &&
          from !== document.body &&
          from.isConnected &&
          !from.matches(":disabled");
        if (usable) from.focus();
        else focusComposer();
      });
    },
  };
}
