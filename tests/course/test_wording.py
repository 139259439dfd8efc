"""Issue 32, the words a careful teacher would correct — kept true for every page, figure and glossary entry,
including ones added later:

* the real model is named truly (SmolLM2-135M-Instruct) at its first mention on each page, which also says once
  what that changes (instruction tuning; 4-bit weights turned back into floats);
* one word per concept: no word the glossary lists as a synonym appears anywhere a learner reads (quiz YAML,
  code comments and figures included, which the build's glossary warning does not see);
* no build jargon (构建时) and no repository paths in learner-facing text;
* one notation: rows (XW, never Wx) and d_k for the head dimension;
* and the same words in what the code shows (widget titles, captions, notes, labels and the scripts' sentences,
  tests/course/learner_text.py `code_texts`): the model's true name, the glossary's words, no build jargon.
"""

from __future__ import annotations

import re

import pytest

from tests.course.learner_text import CODE_FILES, PAGES, code_texts, glossary, learner_texts, page_text

MODEL = "SmolLM2-135M-Instruct"
MODEL_RE = re.compile(r"SmolLM2[\w.-]*")


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_the_model_is_named_truly_at_its_first_mention(path) -> None:
    text = page_text(path)
    names = MODEL_RE.findall(text)
    if not names:
        return
    assert names[0] == MODEL, f"{path.name}: the first mention is {names[0]!r}, not {MODEL}"
    # and the page says once what the name changes: instruction-tuned, quantised weights made floats again
    assert "指令微调" in text and "4 位" in text and "浮点" in text, f"{path.name}: say what -Instruct and Q4_1 change"
    # later mentions are the full name or the family's short name, never the base model's name alone
    for m in re.finditer(r"SmolLM2-135M(?!-Instruct)", text):
        sentence = text[text.rfind("。", 0, m.start()) + 1 : text.find("。", m.end())]
        assert "指令微调" in sentence, f"{path.name}: '{sentence.strip()}' names the base model"


def test_the_glossary_holds_the_chosen_words() -> None:
    terms = {t["term"]: set(t.get("synonyms", [])) for t in glossary()}
    chosen = {
        "仅解码器": {"只解码器"},
        "仅编码器": {"只编码器"},
        "查询头": {"query 头"},
        "词嵌入": {"token 嵌入", "词向量"},
        "输出层": {"LM 头"},
        "logit 透镜": {"逻辑透镜"},
        "可学习的位置嵌入": {"学习的位置嵌入"},
    }
    for term, synonyms in chosen.items():
        assert term in terms and synonyms <= terms[term], term
    assert "逻辑透镜" not in terms


@pytest.mark.parametrize("name,text", learner_texts(), ids=lambda x: x if len(x) < 60 else "")
def test_no_synonym_where_a_learner_reads(name: str, text: str) -> None:
    """The glossary's check (builder/markdown/glossary.py) warns on prose; this covers everything else too."""
    found = []
    for entry in glossary():
        masked = text.replace(entry["term"], "\0")
        if name.startswith("glossary.yml"):  # a definition may name another entry's word only as that entry does
            masked = masked.replace(entry.get("english", ""), "")
        for word in entry.get("synonyms", []):
            if word.isascii():  # English names (KV cache) are how a reader may search, not a second Chinese word
                continue
            if word in masked:
                found.append(f"'{word}' (the glossary's word is '{entry['term']}')")
    assert not found, f"{name}: {', '.join(found)}"


REPO_PATH_RE = re.compile(
    r"\b(?:attention_core|attention_course|builder|theme|content|tests|docs|scripts|site)/[\w./-]*"
    r"|\b[\w-]+\.(?:py|js|mjs|yml|yaml|toml|sqlite)\b"
)


@pytest.mark.parametrize("name,text", learner_texts(), ids=lambda x: x if len(x) < 60 else "")
def test_no_build_jargon_or_repository_paths(name: str, text: str) -> None:
    """A learner reads 网页生成时预先算好, not 构建时; the course names no file of its repository."""
    for word in ("构建时", "构建网站", "构建这个"):
        assert word not in text, f"{name}: '{word}' (say 网页生成时 / 预先算好)"
    paths = REPO_PATH_RE.findall(text)
    assert not paths, f"{name}: names repository files {paths}"


MATH_RE = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)
COLUMN_RE = re.compile(r"W(?:_\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}|_\w|\^\{[^{}]*\}|\^\w)*\s*(?:\\[,;!]\s*)*x\b")
HEAD_DIM_RE = re.compile(r"d_\\text\{head\}|d_\{\\text\{head\}\}|d_\{?head\}?|d_h\b|dₕ|head_dim|d_\\mathrm\{head\}")


@pytest.mark.parametrize("name,text", learner_texts(), ids=lambda x: x if len(x) < 60 else "")
def test_one_notation_rows_and_d_k(name: str, text: str) -> None:
    """The site writes every token as a row: x W (a matrix on the right), never W x; a head's width is d_k."""
    text = text.replace("而不是 $Wx$", "")  # the one sentence that names the other convention to set it aside
    for m in MATH_RE.finditer(text):
        formula = m.group(1) or m.group(2)
        assert not COLUMN_RE.search(formula), f"{name}: ${formula}$ multiplies a matrix by a column x (write xW)"
    assert not HEAD_DIM_RE.search(text), f"{name}: {HEAD_DIM_RE.search(text).group(0)} (the head dimension is d_k)"


CUT_RE = re.compile(r"(?:表示|向量|输入|嵌入|\$?[xX]\$?|Q、K、V)[^。；\n]{0,8}?(?:切|拆|分)(?:成|开)")


@pytest.mark.parametrize("name,text", learner_texts(wrong_options=False), ids=lambda x: x if len(x) < 60 else "")
def test_multi_head_is_not_taught_as_cutting_x(name: str, text: str) -> None:
    """Point 4: every head reads the whole x and projects it to d_k = d/h; what is cut is the projection's output
    (its columns), never the input."""
    for m in CUT_RE.finditer(text):
        assert "列" in m.group(0) or "结果" in m.group(0), f"{name}: '{m.group(0)}' — each head reads all of x"


# ---------------------------------------------------------------------------------- what the code shows a learner

BARE_MODEL_RE = re.compile(r"(?<![/\w-])SmolLM2-135M(?![-\w])")  # not HuggingFaceTB/SmolLM2-135M (a repository id)
CODE_TEXTS = code_texts()
BY_FILE: dict[str, list[tuple[str, str]]] = {}
for _where, _text in CODE_TEXTS:
    BY_FILE.setdefault(_where.rsplit(":", 1)[0], []).append((_where, _text))


def code_problems(where: str, text: str) -> list[str]:
    """What a careful teacher would correct in one string a widget or the theme shows."""
    found = [f"'{word}' (say 网页生成时 / 预先算好)" for word in ("构建时", "构建网站", "构建这个") if word in text]
    if BARE_MODEL_RE.search(text) and "指令微调" not in text:
        found.append("SmolLM2-135M without -Instruct (the model the course runs is SmolLM2-135M-Instruct)")
    for entry in glossary():
        masked = text.replace(entry["term"], "\0")
        found += [
            f"'{word}' (the glossary's word is '{entry['term']}')"
            for word in entry.get("synonyms", [])
            if not word.isascii() and word in masked
        ]
    paths = REPO_PATH_RE.findall(re.sub(r"<[^>]+>", " ", text))  # the markup's own class names are not read
    if paths:
        found.append(f"names repository files {paths}")
    return [f"{where}: {p}: {text[:80]!r}" for p in found]


def test_the_code_scan_sees_what_the_widgets_show() -> None:
    """The scan finds the strings it is meant to: a widget's title, a note made in Python, a JS caption, a template
    line, and a Chinese string inside a template literal's ${…}."""
    texts = dict(CODE_TEXTS)
    assert "真实模型的注意力：SmolLM2-135M-Instruct" in texts.values()  # model-attention's title
    assert any("网页生成时用 NumPy 预先算好" in t for w, t in CODE_TEXTS if "sentences.py" in w)
    next_token = "attention_course/widgets/next_token/"
    assert any(t.startswith("logit 透镜：“") for w, t in CODE_TEXTS if w.startswith(next_token))
    assert "输出来自原始代码（你的修改尚未运行）" in texts.values()  # theme/js/cells/output.js
    assert any(w.startswith("theme/strings.yml") for w in texts)  # the templates' words
    assert "max(0, h)" not in texts.values()  # no Chinese, not a learner's sentence by this rule: left out
    assert any("（负数被截成 0）" == t for t in texts.values())  # a string inside a template's ${…}
    assert len({w.rsplit(":", 1)[0] for w in texts}) > 40 and all(p.is_file() for p in CODE_FILES)
    # and the rule itself catches what it should
    assert code_problems("x", "真实模型 SmolLM2-135M 在构建时算出（因果掩码）") and not code_problems(
        "x", "Hugging Face HuggingFaceTB/SmolLM2-135M 的 config.json；SmolLM2-135M-Instruct 的可学习的位置嵌入"
    )


@pytest.mark.parametrize("path", sorted(BY_FILE), ids=str)
def test_what_the_code_shows_uses_the_courses_words(path: str) -> None:
    found = [p for where, text in BY_FILE[path] for p in code_problems(where, text)]
    assert not found, "\n".join(found)
