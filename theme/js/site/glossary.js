// Glossary tooltips (builder/markdown/glossary.py): a term's first use on a page is a focusable <dfn> whose
// definition shows on hover, focus or tap (CSS). Escape hides it without moving focus (WCAG 1.4.13).
export function initGlossary(doc) {
  const terms = doc.querySelectorAll(".gloss");
  if (!terms.length) return;
  doc.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    for (const term of terms) term.classList.add("is-dismissed");
  });
  for (const term of terms) {
    const show = () => term.classList.remove("is-dismissed");
    term.addEventListener("focus", show);
    term.addEventListener("mouseenter", show);
  }
}
