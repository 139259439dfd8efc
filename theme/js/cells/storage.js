// Reader edits, kept in localStorage per page + cell, tagged with a hash of the authored source so an edit
// made against an older version of the cell is never applied silently. localStorage may be missing or
// throw (file:// in some browsers, private mode, quota): every access degrades to "nothing stored".

const PREFIX = "attention-course:cell:v1:";

function storage() {
  try {
    return window.localStorage || null;
  } catch (_) {
    return null;
  }
}

export const keyFor = (page, cellId) => `${PREFIX}${page}:${cellId}`;

/** A stored value → {base, code} or null. */
export function parseEdit(raw) {
  try {
    const rec = raw ? JSON.parse(raw) : null;
    return rec && typeof rec.code === "string" && typeof rec.base === "string" ? rec : null;
  } catch (_) {
    return null;
  }
}

/** → {base, code} or null; `base` is the source hash the edit was made against. */
export function loadEdit(page, cellId) {
  try {
    return parseEdit(storage()?.getItem(keyFor(page, cellId)));
  } catch (_) {
    return null;
  }
}

export function saveEdit(page, cellId, base, code) {
  try {
    storage()?.setItem(keyFor(page, cellId), JSON.stringify({ base, code, saved: Date.now() }));
  } catch (_) {
    /* quota or disabled storage: the edit just won't survive a reload */
  }
}

export function clearEdit(page, cellId) {
  try {
    storage()?.removeItem(keyFor(page, cellId));
  } catch (_) {
    /* ignore */
  }
}
