/**
 * A chat the user asked to open by a button (New chat, Continue in a new chat) takes the
 * keyboard at its message box once it shows: the button pressed was disabled or went away with
 * the page, so focus had fallen to the page and typing went nowhere. A chat opened any other way
 * (a link, a reload) leaves focus where it is.
 */
let pending = false;

/** Called as the chat is asked for: its message box takes the focus when it mounts. */
export function focusMessageBoxOnArrival(): void {
  pending = true;
}

/** Whether the message box mounting now should take the focus (once). */
export function takeArrivalFocus(): boolean {
  const take = pending;
  pending = false;
  return take;
}
