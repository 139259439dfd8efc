// Search ranking and result text (theme/js/site/search.js is the dialog). Its own script, assets/search.js,
// loaded together with the search index the first time the dialog opens: nothing of it is needed before.
export const MAX_RESULTS = 30;
const CJK_RUN = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+/g;
const WORD = /[a-z0-9]+/g;

/** Query → terms: runs of CJK characters and lowercase Latin words/numbers (everything else separates). */
export function queryTerms(query) {
  const q = query.toLowerCase();
  const terms = [...(q.match(CJK_RUN) || []), ...(q.match(WORD) || [])];
  return [...new Set(terms)];
}

function intersect(a, b) {
  const set = new Set(b);
  return a.filter((x) => set.has(x));
}

function candidatesFor(index, term) {
  if (/^[a-z0-9]+$/.test(term)) {
    // A Latin word matches every indexed word it starts (typing "soft" finds "softmax").
    const found = new Set();
    for (const word of Object.keys(index.words)) {
      if (word.startsWith(term)) for (const s of index.words[word]) found.add(s);
    }
    return [...found];
  }
  if (term.length === 1) return index.grams[term] || [];
  let result = null;
  for (let i = 0; i < term.length - 1; i += 1) {
    const postings = index.grams[term.slice(i, i + 2)] || [];
    result = result === null ? postings : intersect(result, postings);
    if (!result.length) break;
  }
  return result || [];
}

function countOf(haystack, needle) {
  let n = 0;
  for (let at = haystack.indexOf(needle); at !== -1 && n < 20; at = haystack.indexOf(needle, at + needle.length)) n += 1;
  return n;
}

/** A query term and the same term with a glossary word in it swapped for each of its group (遮罩 → 遮罩, mask). */
export function variantsOf(index, term) {
  for (const group of index.synonyms || []) {
    const word = group.find((w) => term.includes(w.toLowerCase()));
    if (word) return [...new Set(group.map((g) => term.replace(word.toLowerCase(), g.toLowerCase())))];
  }
  return [term];
}

/** Ranked results [{section, page, score}] of `query` in `index`: heading matches, then title, then text. */
export function search(index, query) {
  const terms = queryTerms(query);
  if (!terms.length) return [];
  const variants = new Map(terms.map((term) => [term, variantsOf(index, term)]));
  let candidates = null;
  for (const term of terms) {
    const found = [...new Set(variants.get(term).flatMap((v) => candidatesFor(index, v)))];
    candidates = candidates === null ? found : intersect(candidates, found);
    if (!candidates.length) return [];
  }
  const results = [];
  for (const n of candidates) {
    const [pageNo, heading, , text] = index.sections[n];
    const title = index.pages[pageNo][1].toLowerCase();
    const h = heading.toLowerCase();
    const t = text.toLowerCase();
    const firstOfPage = n === 0 || index.sections[n - 1][0] !== pageNo;
    let score = 0;
    let everyTerm = true;
    for (const term of terms) {
      const forms = variants.get(term);
      const inHeading = forms.some((v) => h.includes(v));
      const inTitle = forms.some((v) => title.includes(v));
      const inText = forms.reduce((n, v) => n + countOf(t, v), 0);
      // Bigram postings only narrow the search: the section must really contain the term (a page's title
      // is indexed with its first section).
      if (!inHeading && !inText && !(inTitle && firstOfPage)) {
        everyTerm = false;
        break;
      }
      score += (inHeading ? 100 : 0) + (inTitle ? 30 : 0) + Math.min(inText, 10);
    }
    if (everyTerm) results.push({ section: n, page: pageNo, score });
  }
  results.sort((a, b) => b.score - a.score || a.section - b.section);
  return results.slice(0, MAX_RESULTS);
}

/** Text nodes and <mark>s for `text` with every occurrence of the terms highlighted. */
export function highlighted(text, terms) {
  const lower = text.toLowerCase();
  const ranges = [];
  for (const term of terms) {
    for (let at = lower.indexOf(term); at !== -1; at = lower.indexOf(term, at + term.length)) {
      ranges.push([at, at + term.length]);
    }
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const fragment = document.createDocumentFragment();
  let pos = 0;
  for (const [start, end] of ranges) {
    if (end <= pos) continue;
    const from = Math.max(start, pos);
    if (from > pos) fragment.append(document.createTextNode(text.slice(pos, from)));
    const mark = document.createElement("mark");
    mark.textContent = text.slice(from, end);
    fragment.append(mark);
    pos = end;
  }
  if (pos < text.length) fragment.append(document.createTextNode(text.slice(pos)));
  return fragment;
}

/** A window of the section text around the first match. */
export function snippetOf(text, terms, before = 24, length = 90) {
  const lower = text.toLowerCase();
  const hits = terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0);
  const first = hits.length ? Math.min(...hits) : 0;
  const start = Math.max(0, first - before);
  const end = Math.min(text.length, start + length);
  return (start > 0 ? "…" : "") + text.slice(start, end) + (end < text.length ? "…" : "");
}

export function resultHref(index, result) {
  const [, , anchor] = index.sections[result.section];
  const url = index.pages[result.page][0];
  return anchor ? `${url}#${encodeURIComponent(anchor)}` : url;
}

