"use client";

/** The id of the message box a skip link jumps to (one per page). */
export const COMPOSER_ID = "composer";

/** The message box of the chat on screen takes the focus; whether there was one. */
export function focusComposer(): boolean {
  const box = document.getElementById(COMPOSER_ID);
  box?.focus();
  return box !== null;
}

/** The first stop for the Tab key: straight to the message box, past the sidebar. */
export function SkipToComposer() {
  return (
    <a
      href={`#${COMPOSER_ID}`}
      onClick={(event) => {
        if (focusComposer()) event.preventDefault();
      }}
      className="sr-only focus:not-sr-only focus:fixed focus:top-2 focus:left-2 focus:z-50 focus:rounded-lg focus:bg-ink focus:px-4 focus:py-2 focus:text-sm focus:text-white"
    >
      Skip to the message box
    </a>
  );
}
