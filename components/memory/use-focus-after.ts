"use client";

import { type RefObject, useCallback, useEffect, useRef } from "react";

/**
 * Focus for a list whose rows go away with their buttons (unpin, remove a note): set `next` to
 * the key of the button that should have the focus once `working` is over — the controls are
 * disabled until then — or to "" for `fallback`; leave it null to move nothing. Each button is
 * registered under its key with `register(key)` as its ref.
 */
export function useFocusAfter(working: boolean, fallback: RefObject<HTMLElement | null>) {
  const buttons = useRef(new Map<string, HTMLElement>());
  const next = useRef<string | null>(null);
  useEffect(() => {
    const target = next.current;
    if (target === null || working) return;
    next.current = null;
    (buttons.current.get(target) ?? fallback.current)?.focus();
  }, [working, fallback]);
  const register = useCallback(
    (key: string) => (element: HTMLElement | null) => {
      if (element) buttons.current.set(key, element);
      else buttons.current.delete(key);
    },
    [],
  );
  return { next, register };
}
