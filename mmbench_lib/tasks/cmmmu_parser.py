"""CMMMU prompts, answer extraction and correctness, with parity to the official scorer.

Rules: ``docs/protocols.md`` §4 (CMMMU): prompts §4.3, response-mode extraction and
answer mode §4.4, seeding §4.5, pitfalls §4.7. Paper: CMMMU (Zhang et al.), §4.1 "Evaluation":
options as keywords with the most frequent one taken, random selection for multiple choice
without a valid answer, rule-extracted segments for true/false and fill-in.

Quirks of ``eval/utils/eval_utils.py`` are reproduced on purpose and marked ``QUIRK``. The RNG
is consumed by MC random fallbacks and T/F ties only, in ``CATEGORY_ORDER`` and, within a
category, in output-file order; pass one ``random.Random(42)`` through all calls in that order.
"""
from __future__ import annotations

import random
import re
from collections import Counter
from typing import Mapping, Sequence

from mmbench_lib.tasks.mmmu_parser import (
    NUM_SCIENTIFIC, ParsedAnswer, _dedup, _is_number, _strip_and_pad, key_subresponses,
)

__all__ = [
    "ParsedAnswer", "CATEGORY_ORDER", "CATEGORY_EN", "CATEGORY_FOLDER", "SUBJECTS",
    "SUBJECT_TO_CATEGORY", "INSTRUCTIONS", "MC_CHOICES", "TF_CHOICES", "official_order",
    "index2ans_from_record", "prompt", "parse_multi_choice", "tf_key_responses",
    "parse_true_false", "extract_numbers", "count_letters", "normalize_str", "parse_fill",
    "eval_multi_choice", "eval_true_false", "eval_fill", "evaluate_response", "evaluate_answer",
]

# ---------------------------------------------------------------------------------------------
# Categories and subjects (docs/protocols.md §4.1, §4.2, §4.5)

#: Order in which the official scorer processes categories, hence consumes the RNG (docs/protocols.md §4.2, §4.5).
CATEGORY_ORDER: list[str] = ["艺术与设计", "商业", "科学", "健康与医学", "人文社会科学", "技术与工程"]

#: English category names as printed by the official ``eval_script.py`` (docs/protocols.md §4.2).
CATEGORY_EN: dict[str, str] = {
    "艺术与设计": "Art & Design",
    "商业": "Business",
    "科学": "Science",
    "健康与医学": "Health & Medicine",
    "人文社会科学": "Humanities & Social Sciences",
    "技术与工程": "Technology & Engineering",
}

#: Data folder / HF config name per category (docs/protocols.md §4.1).
CATEGORY_FOLDER: dict[str, str] = {
    "艺术与设计": "art_and_design",
    "商业": "business",
    "科学": "science",
    "健康与医学": "health_and_medicine",
    "人文社会科学": "humanities_and_social_sciences",
    "技术与工程": "technology_and_engineering",
}

#: Category -> {Chinese subject: English subject} (docs/protocols.md §4.2 table).
SUBJECTS: dict[str, dict[str, str]] = {
    "艺术与设计": {"艺术": "Art", "艺术理论": "Art Theory", "设计": "Design", "音乐": "Music"},
    "商业": {"会计": "Accounting", "经济": "Economics", "金融": "Finance", "管理": "Management",
           "营销": "Marketing"},
    "科学": {"生物": "Biology", "化学": "Chemistry", "地理": "Geography", "数学": "Math", "物理": "Physics"},
    "健康与医学": {"基础医学": "Basic Medical Science", "临床医学": "Clinical Medicine",
              "诊断学与实验室医学": "Diagnostics & Laboratory Medicine", "制药": "Pharmacy",
              "公共卫生": "Public Health"},
    "人文社会科学": {"历史": "History", "文献学": "Literature", "社会学": "Sociology", "心理学": "Psychology"},
    "技术与工程": {"农业": "Agriculture", "建筑学": "Architecture", "计算机科学": "Computer Science",
              "电子学": "Electronics", "能源和电力": "Energy & Power", "材料": "Materials",
              "机械工程": "Mechanical Engineering"},
}

SUBJECT_TO_CATEGORY: dict[str, str] = {s: c for c, subs in SUBJECTS.items() for s in subs}


def official_order(ids_by_category: Mapping[str, Sequence]) -> list[tuple[str, object]]:
    """Flatten ``{category: [ids...]}`` into ``[(category_zh, id), ...]`` in official order (docs/protocols.md §4.5).

    Categories may be given by Chinese name, English name or folder name; they come out in
    ``CATEGORY_ORDER``, items in the order given (output-file order). Unknown names raise ValueError.
    """
    alias = {}
    for zh in CATEGORY_ORDER:
        alias[zh] = alias[CATEGORY_EN[zh]] = alias[CATEGORY_FOLDER[zh]] = zh
    resolved: dict[str, Sequence] = {}
    for key, ids in ids_by_category.items():
        if key not in alias:
            raise ValueError(f"unknown CMMMU category {key!r}")
        if alias[key] in resolved:
            raise ValueError(f"category {alias[key]!r} given twice")
        resolved[alias[key]] = ids
    return [(zh, i) for zh in CATEGORY_ORDER if zh in resolved for i in resolved[zh]]


# ---------------------------------------------------------------------------------------------
# Prompts (docs/protocols.md §4.3; lmms-eval text, assumed to be the authors')

INSTRUCTIONS: dict[str, str] = {
    "选择": "请回答以下多项选择题，并选出正确选项。这些题目可能包括单选和多选题型。如果所提供的信息不足以确定一个明确的答案，那么请根据可用的数据和你的判断来选择最可能正确的选项。",
    "判断": "请回答以下判断题，并根据题目描述和所给的信息来判断问题中陈述的对错。如果信息不完整或不足以作出绝对判断，请运用你的逻辑推理和现有信息来做出最可能的判断。",
    "填空": "请回答以下填空题，并根据题目的要求和所提供的信息来给出最恰当的答案。如果信息不足以确切回答，那么请依据现有的数据和你的推理能力来填写最合理的答案。",
}

MC_CHOICES = ["A", "B", "C", "D"]
TF_CHOICES = ["对", "错"]


def index2ans_from_record(record: Mapping) -> dict[str, str]:
    """``{'A': option1, ..., 'D': option4}``; a missing (or null) option becomes "" (docs/protocols.md §4.4)."""
    return {letter: (record.get(f"option{i}") or "") for i, letter in enumerate(MC_CHOICES, start=1)}


def prompt(question: str, options: Sequence[str] | None, question_type: str,
           image_filenames: Sequence[str] = ()) -> str:
    """Instruction + "\\n\\n" + body (docs/protocols.md §4.3), image tags then replaced (docs/protocols.md §4.1).

    MC body: ``问题：{q}\\n选项：\\n(A) {o1}\\n(B) {o2}\\n(C) {o3}\\n(D) {o4}\\n\\n正确答案：\\n``; fewer
    than 4 options are padded with "". T/F and fill: ``问题：{q}\\n正确答案：\\n``. Each
    ``<img="{image_filenames[i-1]}">`` becomes ``<图片 i>``, as lmms-eval does.
    """
    if question_type not in INSTRUCTIONS:
        raise ValueError(f"unknown CMMMU question type {question_type!r} (expected 选择/判断/填空)")
    if question_type == "选择":
        opts = list(options or [])
        if len(opts) > 4:
            raise ValueError(f"CMMMU multiple choice has at most 4 options, got {len(opts)}")
        opts += [""] * (4 - len(opts))
        lines = "".join(f"({letter}) {text}\n" for letter, text in zip(MC_CHOICES, opts))
        body = f"问题：{question}\n选项：\n{lines}\n正确答案：\n"
    else:
        body = f"问题：{question}\n正确答案：\n"
    text = INSTRUCTIONS[question_type] + "\n\n" + body
    for i, name in enumerate(image_filenames, start=1):
        if name:
            text = text.replace(f'<img="{name}">', f"<图片 {i}>")
    return text


# ---------------------------------------------------------------------------------------------
# 选择 multiple choice (docs/protocols.md §4.4)

def parse_multi_choice(response: str | None, index2ans: Mapping[str, str],
                       rng: random.Random | None) -> ParsedAnswer:
    """Official ``get_multi_choice_prediction`` with its caller's guard (docs/protocols.md §4.4 选择, §4.5).

    Empty response (or no options) -> None, mode "empty", no RNG use. Otherwise count per letter
    ``(L)`` (ASCII brackets), else the bare upper-case letter anywhere, else the exact option text
    (case-sensitive); all letters tying the maximum count, concatenated in ABCD order. Nothing
    found -> ``rng.choice(['A','B','C','D'])`` (mode "random"), or None with ``rng=None``.
    """
    if not response or not index2ans:
        return ParsedAnswer(None, True, "empty")
    text = _strip_and_pad(response)
    counts: Counter = Counter()
    mode = "bracket"
    for letter in MC_CHOICES:
        counts[letter] += text.count(f"({letter})")  # QUIRK: full-width （A） does not count
    if not sum(counts.values()):
        mode = "letter"
        for letter in MC_CHOICES:
            # QUIRK (docs/protocols.md §4.7): no word boundaries; "DNA" counts D and A.
            counts[letter] += text.count(letter)
    if not sum(counts.values()) and len(text.split()) >= 1:
        mode = "content"
        for letter, ans in index2ans.items():
            # QUIRK: an empty option text "occurs" len(text) + 1 times.
            counts[letter] += text.count(ans)
    # (The official code has a fourth, "ans in response" pass; it can never add anything.)
    if not sum(counts.values()):
        if rng is None:
            return ParsedAnswer(None, True, "none")
        return ParsedAnswer(rng.choice(MC_CHOICES), True, "random")
    top = max(counts.values())
    return ParsedAnswer("".join(c for c in MC_CHOICES if counts.get(c, 0) == top), False, mode)


# ---------------------------------------------------------------------------------------------
# 判断 true/false (docs/protocols.md §4.4)

TF_INDICATORS = ("是", "为", "所以", "判断", "陈述", "说法", "表达", "答案", "结果")
POSITIVE_KEYWORDS = ("正确", "对", "准确", "肯定", "对的")
NEGATIVE_KEYWORDS = ("不对", "错误", "不正确", "不准确", "不合适", "否定", "错的", "错")
AMBIGUOUS_KEYWORDS = ("对错", "是否正确", "否正确", "或者", "是否", "正确性", "对不")


def tf_key_responses(response: str) -> list[str]:
    """Official ``get_TF_prediction`` (docs/protocols.md §4.4 判断 steps 1-3): key tails, de-duplicated.

    Strip ``。`` then whitespace, split on ``。`` or newline, shortest tail after any indicator
    (no ``=`` rule), whole response when nothing matches. First-seen order (official: a set).
    """
    text = response.strip("。").strip()
    keys = key_subresponses(re.split(r"。|\n", text), TF_INDICATORS) or [text]
    return _dedup(keys)


def parse_true_false(response: str | None, rng: random.Random | None, fixed: bool = False) -> ParsedAnswer:
    """T/F keyword vote (docs/protocols.md §4.4 判断 steps 4-6, §4.5).

    Predictions containing an ambiguity keyword are dropped; each remaining one votes positive or
    negative. QUIRK (official, ``fixed=False``): positives are tested first, so "不正确", "不对"
    and "不准确" vote positive. ``fixed=True`` tests negatives first (NOT official). More
    positives -> 对, more negatives -> 错, a tie (0-0 included, e.g. an empty response) ->
    ``rng.choice(['对','错'])`` (mode "random"), or None with ``rng=None``.
    """
    preds = [p for p in tf_key_responses(response or "") if not any(a in p for a in AMBIGUOUS_KEYWORDS)]
    positive = negative = 0
    for pred in preds:
        is_pos = any(k in pred for k in POSITIVE_KEYWORDS)
        is_neg = any(k in pred for k in NEGATIVE_KEYWORDS)
        if fixed:  # NOT official: negatives first
            if is_neg:
                negative += 1
            elif is_pos:
                positive += 1
        elif is_pos:  # QUIRK: official order, "不正确" contains "正确" and votes positive
            positive += 1
        elif is_neg:
            negative += 1
    if positive > negative:
        return ParsedAnswer("对", False, "vote")
    if negative > positive:
        return ParsedAnswer("错", False, "vote")
    if rng is None:
        return ParsedAnswer(None, True, "none")
    return ParsedAnswer(rng.choice(TF_CHOICES), True, "random")


# ---------------------------------------------------------------------------------------------
# 填空 fill-in (docs/protocols.md §4.4)

FILL_INDICATORS = ("是", "为", "所以", "等于", "方案", "选择", "正确答案", "因此", "最后", "答案", "结果")
_NUM_COMMAS = re.compile(r"-?\d{1,3}(?:，\d{3})+")
#: official ``-?(?:\d+\.\d+|\.\d+|\d+)(?![eE][+-]?\d+)(?!，\d)`` with ``(?<!\d)`` (linear time,
#: same matches: see the note above ``mmmu_parser.extract_numbers``)
_NUM_SIMPLE = re.compile(r"-?(?:(?<!\d)\d+\.\d+|\.\d+|(?<!\d)\d+)(?![eE][+-]?\d+)(?!，\d)")


def extract_numbers(string: str) -> list[str]:
    """Full-width-comma groups, scientific, simple numbers, concatenated (docs/protocols.md §4.4 填空 step 4).

    Same matches as the official patterns, in linear time. QUIRK: ASCII "1,000" is split into
    "1" and "000"; "1，000" (full-width) is one match but is not numeric for ``normalize_str``
    (only ASCII commas are removed), so it stays a string.
    """
    return _NUM_COMMAS.findall(string) + NUM_SCIENTIFIC.findall(string) + _NUM_SIMPLE.findall(string)


def count_letters(string: str) -> int:
    """Number of ASCII letters a-z, A-Z (docs/protocols.md §4.4 填空 step 5)."""
    return sum(1 for c in string if "a" <= c <= "z" or "A" <= c <= "Z")


def normalize_str(string: str | None, answer: str) -> list:
    """Official CMMMU ``normalize_str`` (docs/protocols.md §4.4 填空 steps 1 and 5).

    None -> ``[None]``. Strip; numeric after removing ASCII commas -> ``[round(float, 2)]``.
    Otherwise the string, NOT lower-cased, kept only if ``len <= len(answer) + 20`` and its
    ASCII-letter count is at most the answer's + 2; else ``[]``.
    """
    if string is None:
        return [None]
    string = string.strip()
    if _is_number(string):
        return [round(float(string.replace(",", "")), 2)]
    if len(string) > len(answer) + 20 or count_letters(string) > count_letters(answer) + 2:
        return []
    return [string]


def parse_fill(response: str | None, answer: str) -> list:
    """Official ``get_fill_blank_prediction`` (docs/protocols.md §4.4 填空 steps 2-5). Returns strings and floats.

    Key tails use the fill indicators plus ``=`` on the last sub-response; numbers from each key
    are added; every item is normalised against ``answer`` (length/letter filter). First-seen
    order, de-duplicated (official: a set).
    """
    text = (response or "").strip("。").strip()
    keys = key_subresponses(re.split(r"。|\n", text), FILL_INDICATORS, ("=",)) or [text]
    preds = list(keys)
    for key in keys:
        preds.extend(extract_numbers(key))
    normalized: list = []
    for pred in preds:
        normalized.extend(normalize_str(pred, answer))
    return _dedup(normalized)


# ---------------------------------------------------------------------------------------------
# Correctness (docs/protocols.md §4.4)

def eval_multi_choice(gold: str, pred) -> bool:
    """MC: the prediction string equals the gold letters exactly, e.g. "AC" (docs/protocols.md §4.4 选择)."""
    return pred == gold


def eval_true_false(gold: str, pred) -> bool:
    """T/F: exact 对/错 match (docs/protocols.md §4.4 判断 step 7)."""
    return pred == gold


def eval_fill(gold: str, preds: Sequence) -> bool:
    """Fill-in (docs/protocols.md §4.4 填空 step 6): a string prediction containing the (normalised) string gold,
    case-sensitive, or a float prediction equal to the float gold."""
    norm_answers = normalize_str(gold, gold)
    for pred in preds:
        if isinstance(pred, str):
            if any(isinstance(g, str) and g in pred for g in norm_answers):
                return True
        elif pred in norm_answers:
            return True
    return False


def evaluate_response(question_type: str, response: str | None, answer: str,
                      index2ans: Mapping[str, str] | None, rng: random.Random | None,
                      fixed: bool = False) -> tuple[ParsedAnswer, bool]:
    """Response mode for one item (official ``evaluate_response``, docs/protocols.md §4.4, §4.5).

    Returns ``(parsed, correct)``. Types other than 选择/填空 are treated as 判断, as officially.
    ``fixed`` only affects 判断 (negation bug fixed; not official).
    """
    if question_type == "选择":
        parsed = parse_multi_choice(response, index2ans or {}, rng)
        return parsed, parsed.pred is not None and eval_multi_choice(answer, parsed.pred)
    if question_type == "填空":
        preds = parse_fill(response, answer)
        return ParsedAnswer(preds, False, "fill"), eval_fill(answer, preds)
    parsed = parse_true_false(response, rng, fixed=fixed)
    return parsed, parsed.pred is not None and eval_true_false(answer, parsed.pred)


def evaluate_answer(question_type: str, predicted_answer, answer: str) -> bool:
    """Answer mode for one item (official ``evaluate_answer``, docs/protocols.md §4.4 "Answer mode").

    选择 and 判断: exact string match. 填空: the prediction goes through ``normalize_str`` against
    the gold (length/letter filter) and is matched as in ``eval_fill``. A non-string, non-None
    fill prediction (e.g. a JSON number) is converted with ``str`` (the official code would crash).
    """
    if question_type == "填空":
        if predicted_answer is not None and not isinstance(predicted_answer, str):
            predicted_answer = str(predicted_answer)
        return eval_fill(answer, normalize_str(predicted_answer, answer))
    return predicted_answer == answer
