"""Thinking traces removed before the official parser (tasks/thinking.py) and the ranking refusal."""
from mmbench_lib.tasks import mmmu_parser as mparse
from mmbench_lib.tasks.thinking import MARKERS, ranking_refusal, split_trace, strip_trace, thinking_enabled

CHOICES, INDEX2ANS = ["A", "B", "C", "D"], {"A": "2 m", "B": "4 m", "C": "8 m", "D": "16 m"}


def test_closed_trace_removed_and_kept():
    s = split_trace("<think>Option (A) looks right at first.</think>\nThe answer is C.")
    assert (s.answer, s.trace, s.how) == ("The answer is C.", "Option (A) looks right at first.", "closed")


def test_the_official_parser_reads_the_trace_without_the_step():
    text = "<think>Is it (A)? The length doubles twice.</think>C"
    # the bracketed (A) in the trace wins over the bare C of the answer
    assert mparse.parse_multi_choice(text, CHOICES, INDEX2ANS, None).pred == "A"
    assert mparse.parse_multi_choice(strip_trace(text), CHOICES, INDEX2ANS, None).pred == "C"


def test_closing_marker_only_keeps_the_suffix():
    # the chat template put <think> in the prompt; lmms-eval's strip_reasoning_tags keeps the suffix likewise
    assert split_trace("maybe (B) ... no</think>\n\n(D)").answer == "(D)"
    assert split_trace("maybe (B) ... no</think>\n\n(D)").how == "open-prefix"


def test_unclosed_trace_has_no_answer():
    s = split_trace("<think>(A) or (B)? Let me recount the tiles one by one")
    assert s.answer == "" and s.how == "unclosed" and s.trace.startswith("(A) or (B)")


def test_family_markers_and_several_blocks():
    for start, end in MARKERS:
        assert strip_trace(f"{start}(A){end}(B)") == "(B)"
    assert strip_trace("<think>a</think>x <think>b</think>y") == "x y"


def test_no_marker_is_left_unchanged():
    assert split_trace("  The answer is (B).  ") == split_trace("  The answer is (B).  ")
    assert split_trace("The answer is (B).").how == "none" and strip_trace(None) == ""


def test_ranking_with_thinking_is_refused_with_the_reason():
    assert thinking_enabled({"enable_thinking": True}) and not thinking_enabled({"enable_thinking": False})
    why = ranking_refusal("ranking", {"enable_thinking": True})
    assert why and "enable_thinking" in why and "answer-ranking" in why
    assert ranking_refusal("generation", {"enable_thinking": True}) is None
    assert ranking_refusal("ranking", None) is None
