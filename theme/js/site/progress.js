// Course progress: which pages are visited / done and which quizzes were answered, kept in localStorage
// under one key as versioned JSON. Works on file:// too (Chromium keeps one storage for "file://");
// where storage throws (private mode, locked-down browsers) every progress control stays hidden.
//
// Stored shape: {"v": 1, "pages": {"<slug>": {"visited": true, "done": true, "doneBy": "quizzes" | "reader",
//                                             "quizzes": {"<quiz id>": {"correct": true, "choice": ["<key>"],
//                                                                       "attempts": 1, "revealed": false}},
//                                             "exercises": {"<exercise id>": {"passed": true, "attempts": 2,
//                                                           "failures": 1, "hints": 1, "solution": "asked"}}}}}
// (exercises: cells/exercise.js writes them; the index counts the passed ones of the whole course.)

export const PROGRESS_KEY = "attention-course:progress";
const VERSION = 1;
export const PROGRESS_EVENT = "course-progress-change";
export const AUTO_DONE_EVENT = "course-page-auto-done";

function emptyProgress() {
  return { v: VERSION, pages: {} };
}

export function storageAvailable() {
  try {
    const probe = PROGRESS_KEY + ":probe";
    window.localStorage.setItem(probe, "1");
    window.localStorage.removeItem(probe);
    return true;
  } catch {
    return false;
  }
}

export function loadProgress() {
  try {
    const raw = window.localStorage.getItem(PROGRESS_KEY);
    if (!raw) return emptyProgress();
    const data = JSON.parse(raw);
    if (!data || data.v !== VERSION || typeof data.pages !== "object" || data.pages === null) return emptyProgress();
    return data;
  } catch {
    return emptyProgress();
  }
}

function saveProgress(data) {
  try {
    window.localStorage.setItem(PROGRESS_KEY, JSON.stringify(data));
  } catch {
    /* storage full or unavailable: progress is a convenience, never an error */
  }
  document.dispatchEvent(new CustomEvent(PROGRESS_EVENT));
}

/** Change one page's record: `change(record)` mutates it; the result is saved at once. */
export function updatePage(slug, change) {
  const data = loadProgress();
  const record = data.pages[slug] || (data.pages[slug] = {});
  change(record);
  saveProgress(data);
  return record;
}

export function clearProgress() {
  try {
    window.localStorage.removeItem(PROGRESS_KEY);
  } catch {
    /* nothing stored */
  }
  document.dispatchEvent(new CustomEvent(PROGRESS_EVENT));
}

/** {v, pages: [{slug, url, title, quizzes: [ids]}]} in course order, embedded by the build in every page. */
export function courseData(doc) {
  const el = doc.getElementById("course-data");
  try {
    const data = el ? JSON.parse(el.textContent) : null;
    return data && Array.isArray(data.pages) ? data : { v: 1, pages: [] };
  } catch {
    return { v: 1, pages: [] };
  }
}

/** "done" | "started" | "new" for a course page. */
export function pageState(record) {
  if (!record) return "new";
  if (record.done) return "done";
  if (record.visited || (record.quizzes && Object.keys(record.quizzes).length)) return "started";
  if (record.exercises && Object.keys(record.exercises).length) return "started";
  return "new";
}

const STATE_LABELS = { done: "已完成", started: "进行中", new: "未开始" };

/** Mark the page done once every quiz of it has been answered correctly. */
export function markDoneIfQuizzesCorrect(slug, quizIds) {
  if (!quizIds.length) return false;
  const record = loadProgress().pages[slug] || {};
  const answers = record.quizzes || {};
  if (record.done || !quizIds.every((id) => answers[id] && answers[id].correct)) return false;
  updatePage(slug, (r) => {
    r.done = true;
    r.doneBy = "quizzes";
  });
  document.dispatchEvent(new CustomEvent(AUTO_DONE_EVENT));
  return true;
}

/** What the page-done box says about the stored state, and what its button would do. */
export function doneState(record) {
  if (!record || !record.done) return { done: false, state: "尚未学完", action: "标记为已学完" };
  const cause = record.doneBy === "quizzes" ? "测验全部答对" : "你手动标记";
  return { done: true, state: `已学完 · ${cause}`, action: "取消学完标记" };
}

// The box shows the state and its cause; the button's label is what a click will do; unmarking can be undone.
function initDoneToggle(doc, slug) {
  const box = doc.querySelector("[data-page-done]");
  if (!box) return;
  const button = box.querySelector(".page-done-toggle");
  const undo = box.querySelector(".page-done-undo");
  const state = box.querySelector("[data-page-done-state]");
  const status = box.querySelector("[role='status']");
  let before = null; // the record's done fields before the last unmarking, for 撤销
  const sync = () => {
    const shown = doneState(loadProgress().pages[slug]);
    button.textContent = shown.action;
    state.textContent = shown.state;
    box.classList.toggle("is-done", shown.done);
    if (shown.done) undo.hidden = true;
  };
  button.addEventListener("click", () => {
    const record = loadProgress().pages[slug] || {};
    if (record.done) {
      before = { done: true, doneBy: record.doneBy };
      updatePage(slug, (r) => {
        r.done = false;
        delete r.doneBy;
      });
      undo.hidden = false;
      status.textContent = "已取消学完标记。点“撤销”可以恢复。";
    } else {
      updatePage(slug, (r) => {
        r.done = true;
        r.doneBy = "reader";
      });
      status.textContent = "已标记为学完，首页的课程卡片会显示“已完成”。";
    }
  });
  undo.addEventListener("click", () => {
    if (before) updatePage(slug, (r) => Object.assign(r, before));
    before = null;
    undo.hidden = true;
    status.textContent = "已恢复学完标记。";
    button.focus();
  });
  doc.addEventListener(AUTO_DONE_EVENT, () => {
    status.textContent = "本页测验全部答对，已自动标记为学完。";
  });
  doc.addEventListener(PROGRESS_EVENT, sync);
  sync();
  box.hidden = false;
}

function renderIndex(doc, panel, course) {
  const pages = loadProgress().pages;
  let done = 0;
  let next = null;
  for (const entry of course.pages) {
    const state = pageState(pages[entry.slug]);
    if (state === "done") done += 1;
    else if (!next) next = entry;
    const card = doc.querySelector(`.card[data-slug="${CSS.escape(entry.slug)}"]`);
    if (!card) continue;
    card.dataset.progress = state;
    let badge = card.querySelector(".progress-badge");
    if (!badge) {
      badge = doc.createElement("span");
      badge.className = "progress-badge";
      const meta = card.querySelector(".card-meta");
      if (meta) meta.append(" ", badge);
    }
    badge.dataset.state = state;
    badge.textContent = STATE_LABELS[state];
  }
  const total = course.pages.length;
  panel.querySelector("[data-progress-summary]").textContent = `已完成 ${done} / ${total} 篇`;
  const practice = panel.querySelector("[data-progress-exercises]");
  if (practice) { // passed exercises of the course, with the pages' progress
    const ids = course.pages.flatMap((p) => (p.exercises || []).map((id) => [p.slug, id]));
    const passed = ids.filter(([slug, id]) => pages[slug]?.exercises?.[id]?.passed).length;
    practice.textContent = (practice.dataset.template || "{passed} / {total}").replace("{passed}", passed).replace("{total}", ids.length);
    practice.hidden = ids.length === 0;
  }
  const link = panel.querySelector("[data-progress-continue]");
  if (!link) {
    // no page yet
  } else if (next) {
    link.href = next.url;
    link.textContent = `继续学习：${next.title} →`;
  } else if (total) {
    link.href = course.pages[0].url;
    link.textContent = "全部学完了！从第一篇开始复习 →";
  }
  if (link) link.parentElement.hidden = total === 0;
}

function initIndexPanel(doc, course) {
  const panel = doc.querySelector(".progress-panel");
  if (!panel) return;
  const resetButton = panel.querySelector("[data-progress-reset]");
  const confirmBox = panel.querySelector("[data-progress-confirm]");
  const status = panel.querySelector(".progress-reset-status");
  const closeConfirm = () => {
    confirmBox.hidden = true;
    resetButton.setAttribute("aria-expanded", "false");
    resetButton.focus();
  };
  resetButton.setAttribute("aria-expanded", "false");
  resetButton.addEventListener("click", () => {
    confirmBox.hidden = false;
    resetButton.setAttribute("aria-expanded", "true");
    status.textContent = "";
    panel.querySelector("[data-progress-reset-no]").focus();
  });
  panel.querySelector("[data-progress-reset-no]").addEventListener("click", closeConfirm);
  panel.querySelector("[data-progress-reset-yes]").addEventListener("click", () => {
    clearProgress();
    closeConfirm();
    status.textContent = "学习进度已重置。";
  });
  confirmBox.addEventListener("keydown", (event) => {
    if (event.key === "Escape") closeConfirm();
  });
  doc.addEventListener(PROGRESS_EVENT, () => renderIndex(doc, panel, course));
  // Another tab (or a page left with the back button) may have changed the progress.
  window.addEventListener("storage", (event) => {
    if (event.key === PROGRESS_KEY || event.key === null) renderIndex(doc, panel, course);
  });
  window.addEventListener("pageshow", () => renderIndex(doc, panel, course));
  renderIndex(doc, panel, course);
  panel.hidden = false;
}

export function initProgress(doc) {
  if (!storageAvailable()) {
    // Without storage there is no progress to show: drop the server-rendered defaults.
    for (const el of doc.querySelectorAll(".progress-panel, .progress-badge")) el.hidden = true;
    return;
  }
  const course = courseData(doc);
  const slug = doc.body.dataset.page;
  if (course.pages.some((p) => p.slug === slug)) {
    updatePage(slug, (r) => {
      r.visited = true;
    });
    initDoneToggle(doc, slug);
  }
  initIndexPanel(doc, course);
}
