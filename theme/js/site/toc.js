// Sidebar table of contents: highlight the section being read; collapse the TOC on narrow screens.
export function initToc(doc) {
  const toc = doc.querySelector(".toc");
  if (!toc) return;
  const links = new Map();
  for (const a of toc.querySelectorAll("a[href^='#']")) {
    links.set(decodeURIComponent(a.getAttribute("href").slice(1)), a);
  }
  const headings = [...links.keys()].map((id) => doc.getElementById(id)).filter(Boolean);
  if (!headings.length || !("IntersectionObserver" in window)) return;
  let current = null;
  const observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (entry.isIntersecting) {
          if (current) current.classList.remove("active");
          current = links.get(entry.target.id);
          if (current) current.classList.add("active");
        }
      }
    },
    { rootMargin: "0px 0px -70% 0px" },
  );
  headings.forEach((h) => observer.observe(h));
}
