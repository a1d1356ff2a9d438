"""Golden tests for mmbench_lib.tasks.cmmmu_parser, from the rules and pitfalls of docs/protocols.md §4.3-4.7."""
import random
import re

import pytest
from hypothesis import given, settings, strategies as st

from mmbench_lib.tasks import cmmmu_parser as cmmmu
from mmbench_lib.tasks.cmmmu_parser import (
    CATEGORY_ORDER, ParsedAnswer, eval_fill, evaluate_answer, evaluate_response, extract_numbers, normalize_str,
    official_order, parse_fill, parse_multi_choice, parse_true_false, prompt, tf_key_responses,
)

COLORS = {"A": "红色", "B": "蓝色", "C": "绿色", "D": "黄色"}


def fresh_state_unchanged(rng):
    """True when ``rng`` has not been consumed since it was created with seed 42."""
    return rng.getstate() == random.Random(42).getstate()


# --- §4.3 prompts -----------------------------------------------------------------------------

def test_prompt_multiple_choice_exact():
    got = prompt('看图<img="q_1_001.png">回答', ["甲", "乙", "丙", "丁"], "选择", ["q_1_001.png"])
    assert got == (cmmmu.INSTRUCTIONS["选择"] + "\n\n问题：看图<图片 1>回答\n选项：\n"
                   "(A) 甲\n(B) 乙\n(C) 丙\n(D) 丁\n\n正确答案：\n")


@pytest.mark.parametrize("qtype", ["判断", "填空"])
def test_prompt_tf_and_fill_exact(qtype):
    assert prompt("一加一等于二", None, qtype) == cmmmu.INSTRUCTIONS[qtype] + "\n\n问题：一加一等于二\n正确答案：\n"


def test_instructions_verbatim():
    assert cmmmu.INSTRUCTIONS["选择"].startswith("请回答以下多项选择题，并选出正确选项。")
    assert cmmmu.INSTRUCTIONS["判断"].endswith("请运用你的逻辑推理和现有信息来做出最可能的判断。")
    assert cmmmu.INSTRUCTIONS["填空"].endswith("那么请依据现有的数据和你的推理能力来填写最合理的答案。")
    with pytest.raises(ValueError):
        prompt("q", None, "问答")


def test_prompt_pads_missing_options():
    assert "(C) \n(D) \n\n正确答案" in prompt("q", ["x", "y"], "选择")


# --- §4.4 选择 ------------------------------------------------------------------------------

@pytest.mark.parametrize("response, expected, mode", [
    ("(A)正确，(C)也对，(D)也可以", "ACD", "bracket"),  # all letters tying the max, ABCD order
    ("(B)(B)(A)", "B", "bracket"),
    ("（B） 其实是 (A)", "A", "bracket"),  # full-width brackets are not counted
    ("这是DNA复制", "AD", "letter"),  # bare letters anywhere, inside words
    ("ATP和DNA", "A", "letter"),  # A twice, D once
    ("（B）", "B", "letter"),  # the full-width bracket only helps via the bare letter
    ("我认为是蓝色", "B", "content"),
    ("蓝色和绿色，最终蓝色", "B", "content"),
    ("绿色，黄色", "CD", "content"),
])
def test_multi_choice_examples(response, expected, mode):
    assert parse_multi_choice(response, COLORS, None) == ParsedAnswer(expected, False, mode)


def test_multi_choice_option_text_is_case_sensitive_and_lowercase_letters_ignored():
    options = {"A": "Red", "B": "blue", "C": "x", "D": "y"}
    assert parse_multi_choice("答案是b", options, None) == ParsedAnswer(None, True, "none")
    assert parse_multi_choice("答案是blue", options, None).pred == "B"
    assert parse_multi_choice("答案是red", options, None) == ParsedAnswer(None, True, "none")


def test_empty_option_text_quirk():
    options = {"A": "红色", "B": "", "C": "绿色", "D": "黄色"}
    # "" occurs len(" 不知道 ") + 1 = 6 times, so B wins even against a real match of A.
    assert parse_multi_choice("不知道", options, None).pred == "B"
    assert parse_multi_choice("红色", options, None).pred == "B"
    two_empty = {"A": "", "B": "", "C": "绿色", "D": "黄色"}
    assert parse_multi_choice("不知道", two_empty, None).pred == "AB"


def test_empty_response_is_wrong_without_rng_use():
    rng = random.Random(42)
    assert parse_multi_choice("", COLORS, rng) == ParsedAnswer(None, True, "empty")
    assert parse_multi_choice(None, COLORS, rng).pred is None
    parsed, correct = evaluate_response("选择", "", "A", COLORS, rng)
    assert parsed.pred is None and correct is False
    assert fresh_state_unchanged(rng)


def test_whitespace_response_falls_to_random():
    # non-empty, so it is parsed; no tokens, so even an empty option text cannot match.
    rng = random.Random(42)
    got = parse_multi_choice("   ", {"A": "", "B": "x", "C": "y", "D": "z"}, rng)
    assert got == ParsedAnswer(random.Random(42).choice(["A", "B", "C", "D"]), True, "random")


def test_random_fallback_stream():
    rng = random.Random(42)
    got = [parse_multi_choice(r, COLORS, rng).pred for r in ["不知道", "(B)", "无法确定", "都不是"]]
    ref = random.Random(42)
    abcd = ["A", "B", "C", "D"]
    assert got == [ref.choice(abcd), "B", ref.choice(abcd), ref.choice(abcd)]


def test_multi_answer_gold_exact_match():
    parsed, correct = evaluate_response("选择", "(A)和(C)", "AC", COLORS, None)
    assert parsed.pred == "AC" and correct
    assert not evaluate_response("选择", "(A)", "AC", COLORS, None)[1]


# --- §4.4 判断 ------------------------------------------------------------------------------

@pytest.mark.parametrize("response, official, fixed", [
    ("这个说法是正确的。", "对", "对"),
    ("错误", "错", "错"),
    ("对", "对", "对"),
    ("答案：错的", "错", "错"),
    ("不正确", "对", "错"),  # QUIRK: "不正确" contains "正确"
    ("这个陈述不对", "对", "错"),
    ("所以不准确", "对", "错"),
])
def test_true_false_votes(response, official, fixed):
    assert parse_true_false(response, None) == ParsedAnswer(official, False, "vote")
    assert parse_true_false(response, None, fixed=True) == ParsedAnswer(fixed, False, "vote")


def test_tf_key_responses():
    assert tf_key_responses("这个说法是正确的。") == ["正确的"]
    assert tf_key_responses("答案是错误\n结果是错误\n所以是正确") == ["错误", "正确"]
    assert tf_key_responses("。无法得知。") == ["无法得知"]


def test_ambiguity_keywords_are_dropped_then_tie_goes_random():
    assert parse_true_false("我无法判断对错", None) == ParsedAnswer(None, True, "none")
    rng = random.Random(42)
    assert parse_true_false("我无法判断对错", rng) == ParsedAnswer(random.Random(42).choice(["对", "错"]), True, "random")


def test_tie_and_dedup():
    # one positive and one negative key -> tie
    assert parse_true_false("答案是正确\n结果是错误", None).mode == "none"
    # duplicates vote once (official set): 错误, 正确 -> tie, not 2:1
    assert parse_true_false("答案是错误\n结果是错误\n所以是正确", None).pred is None


def test_empty_tf_response_consumes_rng():
    rng = random.Random(42)
    got = [parse_true_false(r, rng).pred for r in ["", "信息不足", "正确"]]
    ref = random.Random(42)
    assert got == [ref.choice(["对", "错"]), ref.choice(["对", "错"]), "对"]


def test_mc_and_tf_share_one_stream():
    rng = random.Random(42)
    got = [parse_multi_choice("不知道", COLORS, rng).pred, parse_true_false("", rng).pred,
           parse_multi_choice("", COLORS, rng).pred, parse_true_false("", rng).pred]
    ref = random.Random(42)
    assert got == [ref.choice(["A", "B", "C", "D"]), ref.choice(["对", "错"]), None, ref.choice(["对", "错"])]


# --- §4.4 填空 ------------------------------------------------------------------------------

def test_extract_numbers():
    assert extract_numbers("1，000") == ["1，000", "000"]
    assert extract_numbers("1,000") == ["1", "000"]
    assert extract_numbers("约1.2e3与-0.5") == ["1.2e3", "1", "3", "-0.5"]


@pytest.mark.parametrize("gold, response, correct", [
    ("34.6", "答案是34.6", True),
    ("34.6", "结果约为34.60米", True),  # number extracted from a string key
    ("34.6", "34.6米", True),
    ("NW", "风向为NW。", True),
    ("NW", "风向为nw", False),  # case-sensitive
    ("<", "所以a<b", True),
    ("1000", "1,000", True),  # a key that is exactly "1,000" normalises to 1000.0
    ("1000", "答案是1,000元", False),  # split into 1 and 000
    ("1000", "答案是1，000", False),  # full-width groups match but are not numeric
    ("5", "x+y=5", True),  # '=' on the (only, hence last) line
    ("5", "x=5\n所以y=7", False),  # '=' is an indicator on the last line only
    ("（1）", "答案为（1）", True),
])
def test_fill_examples(gold, response, correct):
    assert eval_fill(gold, parse_fill(response, gold)) is correct


def test_fill_key_tails_and_whole_response():
    assert parse_fill("x=5\n所以y=7", "5") == [7.0]
    # no key tail anywhere: the whole response is kept (if it passes the filter) plus its numbers
    assert parse_fill("x=5\n无", "5") == ["x=5\n无", 5.0]
    assert parse_fill("答案为（1）", "（1）") == ["（1）", 1.0]


def test_fill_length_and_letter_filter():
    assert normalize_str("乙" * 20 + "甲", "甲") == ["乙" * 20 + "甲"]  # len 21 = len(gold) + 20
    assert normalize_str("乙" * 21 + "甲", "甲") == []
    assert eval_fill("甲", parse_fill("乙" * 21 + "甲", "甲")) is False
    assert eval_fill("甲", parse_fill("乙" * 20 + "甲", "甲")) is True
    assert normalize_str("ab甲", "甲") == ["ab甲"]  # 2 letters <= 0 + 2
    assert normalize_str("abc甲", "甲") == []
    assert normalize_str(" 1,234.567 ", "x") == [1234.57]
    assert normalize_str(None, "x") == [None]


def test_fill_strings_never_match_float_gold():
    assert eval_fill("5", ["5"]) is False
    assert eval_fill("甲", [5.0]) is False


# --- answer mode and orders ------------------------------------------------------------------

@pytest.mark.parametrize("qtype, pred, gold, correct", [
    ("选择", "AC", "AC", True),
    ("选择", "CA", "AC", False),
    ("判断", "对", "对", True),
    ("判断", "错", "对", False),
    ("填空", "34.60", "34.6", True),
    ("填空", "nw", "NW", False),
    ("填空", None, "5", False),
    ("填空", 5, "5", True),
    ("填空", "x" * 30, "x", False),  # filtered out by the letter count
])
def test_evaluate_answer(qtype, pred, gold, correct):
    assert evaluate_answer(qtype, pred, gold) is correct


def test_category_tables_and_order():
    assert CATEGORY_ORDER == ["艺术与设计", "商业", "科学", "健康与医学", "人文社会科学", "技术与工程"]
    assert sum(len(s) for s in cmmmu.SUBJECTS.values()) == 30
    assert cmmmu.SUBJECT_TO_CATEGORY["物理"] == "科学" and cmmmu.SUBJECTS["商业"]["管理"] == "Management"
    got = official_order({"technology_and_engineering": [3], "Business": [2, 1], "艺术与设计": [9]})
    assert got == [("艺术与设计", 9), ("商业", 2), ("商业", 1), ("技术与工程", 3)]
    with pytest.raises(ValueError):
        official_order({"nope": []})


def test_index2ans_from_record():
    assert cmmmu.index2ans_from_record({"option1": "a", "option3": None}) == {"A": "a", "B": "", "C": "", "D": ""}


# --- properties --------------------------------------------------------------------------------

PROPS = settings(max_examples=200, deadline=None)


@PROPS
@given(st.text(), st.lists(st.text(max_size=6), min_size=4, max_size=4), st.integers(0, 2**32 - 1))
def test_property_multi_choice(response, options, seed):
    index2ans = dict(zip("ABCD", options))
    for rng in (random.Random(seed), None):
        got = parse_multi_choice(response, index2ans, rng)
        if got.pred is None:
            assert got.fallback and (response == "" or rng is None)
        else:
            assert re.fullmatch("A?B?C?D?", got.pred) and got.pred


@PROPS
@given(st.text(), st.integers(0, 2**32 - 1), st.booleans())
def test_property_true_false(response, seed, fixed):
    assert parse_true_false(response, random.Random(seed), fixed=fixed).pred in ("对", "错")
    assert parse_true_false(response, None, fixed=fixed).pred in ("对", "错", None)


@PROPS
@given(st.text(), st.text(min_size=1))
def test_property_fill(response, gold):
    preds = parse_fill(response, gold)
    assert isinstance(preds, list) and all(isinstance(p, (str, float)) for p in preds)
    assert isinstance(eval_fill(gold, preds), bool)
    assert isinstance(evaluate_answer("填空", response, gold), bool)


# --- linear-time number extraction == the official regexes (docs/protocols.md §4.4 填空 step 4) --------------

#: The official ``eval_utils.py`` patterns, kept here as the oracle (quadratic on long digit runs).
OFFICIAL_NUMBER_PATTERNS = (r"-?\d{1,3}(?:，\d{3})+", r"-?\d+(?:\.\d+)?[eE][+-]?\d+",
                            r"-?(?:\d+\.\d+|\.\d+|\d+)(?![eE][+-]?\d+)(?!，\d)")


def official_numbers(string):
    return [m for pattern in OFFICIAL_NUMBER_PATTERNS for m in re.findall(pattern, string)]


NUMBER_ALPHABET = st.sampled_from(list("0123456789" * 3 + "，，,..--+eeE ax_²٣５。\n"))


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=NUMBER_ALPHABET, max_size=30))
def test_property_extract_numbers_equals_official_regexes(text):
    assert cmmmu.extract_numbers(text) == official_numbers(text)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=30))
def test_property_extract_numbers_any_unicode(text):
    assert cmmmu.extract_numbers(text) == official_numbers(text)


@pytest.mark.parametrize("text", ["12345，678", "-12345，678，9", "1，000，0000", "12e5", "1.25e5", "1.2e5", "5，1",
                                  "12，3", "1.2，3", ".5e5", "1" * 2000 + "e5"])
def test_extract_numbers_edge_cases(text):
    assert cmmmu.extract_numbers(text) == official_numbers(text)


def test_long_digit_runs_are_linear():
    """A 1 MB digit run (the official regexes never finish) parses; the result is checked, not timed."""
    run = "7" * 1_000_000
    assert cmmmu.extract_numbers(run) == [run]
    assert cmmmu.extract_numbers(run + "e5") == [run + "e5", run[:-1], "5"]  # the run gives back its last digit
