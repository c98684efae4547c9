import type { KeyboardEvent } from "react";

/**
 * An Enter that commits what an input method is composing (a Chinese or Japanese candidate),
 * not one meant for the page. Safari reports that Enter after the composition has ended, with
 * `isComposing` false, but still with the IME's key code 229.
 */
export function isImeKey(event: KeyboardEvent): boolean {
  return event.nativeEvent.isComposing || event.keyCode === 229;
}
