// Quizzes: the server-rendered <fieldset> (native radio/checkbox inputs, so keyboard use is the browser's)
// gets feedback on the chosen options, 再试一次, 显示答案, and the answer stored in progress.
// The correct answer (the explanation, the 漏选 marks) is shown only once the reader is right, has been wrong
// twice, or presses 显示答案 — on the first wrong try only the chosen options get their feedback. The stored
// record ({correct, choice, attempts, revealed}) is restored by the same rule, so a reload shows no more.
// The build shuffles the options (builder/markdown/quiz.py): an option is named by its stable key (data-key, a hash
// of its text), never by where it is shown, so `choice` holds keys. A record from before the shuffle holds the
// authored indexes (data-index) and is read through them; one naming an option that is gone is dropped.
import { courseData, loadProgress, markDoneIfQuizzesCorrect, storageAvailable, updatePage } from "./progress.js";

function sameSet(a, b) {
  return a.length === b.length && a.every((x) => b.includes(x));
}

/** The option keys a stored choice names, or null when it names an option the quiz no longer has (its text was
 * edited: the stored answer was given to another question). Numbers are authored indexes (records from before
 * the options were shuffled). */
export function storedChoice(saved, options) {
  const keys = [];
  for (const item of saved) {
    const option =
      typeof item === "string"
        ? options.find((o) => o.dataset.key === item)
        : Number.isInteger(item)
          ? options.find((o) => Number(o.dataset.index) === item)
          : undefined;
    if (!option) return null;
    if (!keys.includes(option.dataset.key)) keys.push(option.dataset.key);
  }
  return keys;
}

function setupQuiz(quiz, { slug, quizIds, canStore }) {
  const id = quiz.dataset.quizId;
  const form = quiz.querySelector(".quiz-form");
  const inputs = [...quiz.querySelectorAll(".quiz-option input")];
  const options = [...quiz.querySelectorAll(".quiz-option")];
  const submit = quiz.querySelector(".quiz-submit");
  const retry = quiz.querySelector(".quiz-retry");
  const reveal = quiz.querySelector(".quiz-reveal");
  const result = quiz.querySelector(".quiz-result");
  const details = quiz.querySelector(".quiz-explanation");
  const keyOf = (option) => option.dataset.key;
  const correct = options.filter((o) => o.hasAttribute("data-correct")).map(keyOf);
  // With JavaScript the explanation (which names the answer) waits until it is earned or asked for.
  if (details) details.hidden = true;
  let attempts = 0;
  let revealed = false;
  let lastChoice = [];

  function clear() {
    for (const option of options) {
      option.classList.remove("is-correct", "is-incorrect", "is-missed");
      option.querySelector(".quiz-verdict")?.remove();
      const feedback = option.querySelector(".quiz-feedback");
      feedback.hidden = true;
      option.querySelector("input").removeAttribute("aria-describedby");
    }
    quiz.classList.remove("is-answered", "is-right", "is-wrong", "is-revealed");
    result.textContent = "";
  }

  function verdict(option, text, kind) {
    const badge = document.createElement("strong");
    badge.className = `quiz-verdict quiz-verdict-${kind}`;
    badge.textContent = text;
    if (kind === "missed") {
      // A missed right answer is marked, but its feedback stays for when the reader picks it.
      option.querySelector(".quiz-choice").append(badge);
      return;
    }
    const feedback = option.querySelector(".quiz-feedback");
    feedback.prepend(badge);
    feedback.hidden = false;
    option.querySelector("input").setAttribute("aria-describedby", feedback.id);
  }

  function announceText(message, announce) {
    if (announce) {
      // Empty then fill: screen readers announce a live region's change, even to the same text.
      result.textContent = "";
      window.setTimeout(() => {
        result.textContent = message;
      }, 50);
    } else {
      result.textContent = message;
    }
  }

  function store() {
    if (!canStore) return;
    updatePage(slug, (record) => {
      record.quizzes = record.quizzes || {};
      record.quizzes[id] = { correct: sameSet(lastChoice, correct), choice: lastChoice, attempts, revealed };
    });
  }

  // Show the evaluated state of `choice` (option keys); `announce` is false when restoring on load.
  function show(choice, announce) {
    clear();
    lastChoice = choice;
    const right = sameSet(choice, correct);
    const open = right || revealed || attempts >= 2;
    for (const option of options) {
      const key = keyOf(option);
      const isCorrect = correct.includes(key);
      option.querySelector("input").checked = choice.includes(key);
      if (choice.includes(key)) {
        option.classList.add(isCorrect ? "is-correct" : "is-incorrect");
        verdict(option, isCorrect ? "✓ 正确" : "✗ 错误", isCorrect ? "correct" : "incorrect");
      } else if (isCorrect && quiz.dataset.quizType === "multiple" && !right && open) {
        option.classList.add("is-missed");
        verdict(option, "漏选", "missed");
      }
    }
    for (const input of inputs) input.disabled = true;
    quiz.classList.add("is-answered", right ? "is-right" : "is-wrong");
    if (open) quiz.classList.add("is-revealed");
    submit.hidden = true;
    retry.hidden = false;
    reveal.hidden = open;
    if (details) {
      details.hidden = !open;
      details.open = open;
    }
    let message;
    if (right) message = "✓ 回答正确！解析已展开。";
    else if (open) message = "✗ 还不对。正确答案和解析已在下方展开。";
    else message = "✗ 还不对。看看所选选项下的提示，再试一次；也可以点“显示答案”。";
    announceText(message, announce);
    return right;
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const choice = inputs.filter((i) => i.checked).map((i) => i.value);
    if (!choice.length) {
      result.textContent = quiz.dataset.quizType === "multiple" ? "请至少选择一项再提交。" : "请先选择一个选项再提交。";
      inputs[0].focus();
      return;
    }
    attempts += 1;
    const right = show(choice, true);
    retry.focus();
    store();
    if (canStore && right) markDoneIfQuizzesCorrect(slug, quizIds);
  });

  reveal.addEventListener("click", () => {
    revealed = true;
    show(lastChoice, true);
    store();
    details.querySelector("summary").focus();
  });

  retry.addEventListener("click", () => {
    clear();
    for (const input of inputs) {
      input.disabled = false;
      input.checked = false;
    }
    submit.hidden = false;
    retry.hidden = true;
    reveal.hidden = true;
    if (details) {
      details.open = false;
      details.hidden = !revealed;
    }
    inputs[0].focus();
  });

  if (canStore) {
    const saved = ((loadProgress().pages[slug] || {}).quizzes || {})[id];
    const choice = saved && Array.isArray(saved.choice) ? storedChoice(saved.choice, options) : null;
    if (choice && choice.length) {
      attempts = Number.isInteger(saved.attempts) ? saved.attempts : 1;
      revealed = saved.revealed === true;
      show(choice, false);
    }
  }
  quiz.dataset.ready = "true";
}

export function initQuizzes(doc) {
  const quizzes = doc.querySelectorAll(".quiz");
  if (!quizzes.length) return;
  const slug = doc.body.dataset.page;
  const entry = courseData(doc).pages.find((p) => p.slug === slug);
  const quizIds = entry ? entry.quizzes : [...quizzes].map((q) => q.dataset.quizId);
  const canStore = storageAvailable();
  for (const quiz of quizzes) setupQuiz(quiz, { slug, quizIds, canStore });
}
