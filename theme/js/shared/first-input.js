// The reader's first sign of life — a scroll, touch, pointer move or key: what a page defers until someone reads it.
import { course } from "./course.js";

const INPUT_EVENTS = ["scroll", "pointermove", "pointerdown", "touchstart", "keydown", "wheel"];

/** Call `fn` once, at the first of those events — at once if one came already (the page's scripts are separate
 *  bundles, so the fact is kept on the one global: a script loaded because of that input still hears of it). */
export function onFirstInput(fn) {
  if (course().inputSeen) { fn(); return; }
  const go = () => {
    for (const type of INPUT_EVENTS) window.removeEventListener(type, go, true);
    course().inputSeen = true;
    fn();
  };
  for (const type of INPUT_EVENTS) window.addEventListener(type, go, { capture: true, passive: true });
}
