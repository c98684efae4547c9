"use client";

import { useCallback, useEffect, useRef } from "react";
import { isHoverless } from "../ui/use-hoverless";
import { focusComposer } from "./skip-link";

/** How long after a chat action a focus that fell to the page goes to the message box. */
const RESCUE_MS = 20_000;

/**
 * A chat action whose button goes as it acts (Regenerate, Retry and Continue while the reply
 * streams, a version switch that draws the messages anew, an edit sent) drops keyboard focus to
 * the page, and the next Tab starts from the top, past the whole chat list. Once after such an
 * action (`arm`, called by the action itself), within a while, focus that fell to the page (or
 * sits on a button that became disabled) goes to the message box instead — never while a dialog
 * is open or text is selected (the user is reading or copying), nor on a touch screen.
 */
export function useFocusRescue(): () => void {
  const until = useRef(0);
  useEffect(() => {
    // On a screen that cannot hover, focusing the message box would open its keyboard.
    if (Date.now() > until.current || isHoverless()) return;
    if (document.querySelector("[role=dialog], [role=alertdialog]")) return;
    if (window.getSelection()?.isCollapsed === false) return;
    const focused = document.activeElement;
    const lost = !focused || focused === document.body || focused.matches(":disabled");
    if (!lost) return;
    until.current = 0;
    focusComposer();
  });
  return useCallback(() => {
    until.current = Date.now() + RESCUE_MS;
  }, []);
}
