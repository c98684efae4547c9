/** How long a redrawn timeline is watched for its rows settling around the element held. */
const HOLD_MS = 1_000;
/** Frames in a row the element must stay put for the hold to end early. */
const STILL_FRAMES = 6;
/** Keys that scroll the timeline: the user taking the view elsewhere ends the hold. */
const SCROLL_KEYS = new Set(["ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End"]);

/**
 * Keeps an element of the timeline at `top` (its distance from the viewport's top, in px) while
 * the rows around it settle: a list drawn anew (a version switch) measures its rows over a few
 * frames, and each measurement can move what is on screen. `find` is asked every frame (the row
 * may be drawn anew itself); the scroller is moved by however far the element moved, until it
 * stays put, the hold's time is up, or the user scrolls.
 */
export function keepInPlace(scroller: HTMLElement, find: () => Element | null, top: number): void {
  const until = performance.now() + HOLD_MS;
  let still = 0;
  let frame = 0;
  const end = () => {
    cancelAnimationFrame(frame);
    scroller.removeEventListener("wheel", end);
    scroller.removeEventListener("touchmove", end);
    window.removeEventListener("keydown", onKey, true);
  };
  const onKey = (event: KeyboardEvent) => {
    if (SCROLL_KEYS.has(event.key)) end();
  };
  const hold = () => {
    const element = find();
    const moved = element ? element.getBoundingClientRect().top - top : 0;
    if (Math.abs(moved) >= 0.5) {
      scroller.scrollTop += moved;
      still = 0;
    } else {
      still += 1;
    }
    if (still >= STILL_FRAMES || performance.now() > until) end();
    else frame = requestAnimationFrame(hold);
  };
  scroller.addEventListener("wheel", end, { passive: true });
  scroller.addEventListener("touchmove", end, { passive: true });
  window.addEventListener("keydown", onKey, true);
  hold();
}
