// The reader's first sign of life — a scroll, touch, pointer move or key: what a page defers until someone reads it.
const INPUT_EVENTS = ["scroll", "pointermove", "pointerdown", "touchstart", "keydown", "wheel"];

/** Call `fn` once, at the first of those events. */
export function onFirstInput(fn) {
  const go = () => {
    for (const type of INPUT_EVENTS) window.removeEventListener(type, go, true);
    fn();
  };
  for (const type of INPUT_EVENTS) window.addEventListener(type, go, { capture: true, passive: true });
}
