"""MMMU-Pro prompts and answer extraction, rule for rule as the official ``mmmu-pro/`` code.

Paper: MMMU-Pro (Yue et al., 2024, arXiv 2409.02813) §2 (construction: 10 options, vision
setting) and §3 (direct and CoT prompts, "the last line ... 'Answer: $LETTER'"). Official code:
``mmmu-pro/prompts.yaml`` (the four instructions), ``mmmu-pro/infer/infer_*.py`` (prompt layout,
image order) and ``mmmu-pro/evaluate.py`` (``parse_multi_choice_response``,
``mmmu_process_results``) in the MMMU-Benchmark/MMMU repository.

The extraction differs from MMMU's (``mmmu_parser.parse_multi_choice``) in three places, each
marked ``QUIRK``: an ``Answer:`` rule first, a bare-letter pass that is not space-guarded on the
left (``"L "``), and an extra ``"L."`` pass. Its fallback is ``random.choice`` on the unseeded
global generator; here it is a draw from a given ``random.Random`` (seeded by the caller) and the
answer is marked ``fallback=True``.
"""
from __future__ import annotations

import ast
import random
from typing import Mapping, Sequence

from mmbench_lib.tasks.mmmu_parser import ParsedAnswer

__all__ = ["PROMPTS", "METHODS", "SETTINGS", "options_block", "standard_prompt", "vision_prompt",
           "mc_info", "parse_answer", "is_correct"]

#: ``prompts.yaml`` after YAML parsing: method -> setting -> instruction (verbatim).
PROMPTS: dict[str, dict[str, str]] = {
    "cot": {
        "vision": "Write out the multiple-choice question in the image and then solve it. The last line of your "
                  "response should be of the following format: 'Answer: $LETTER' (without quotes) where LETTER is "
                  "one of options. Think step by step before answering.",
        "standard": "Answer the preceding multiple choice question. The last line of your response should be of the "
                    "following format: 'Answer: $LETTER' (without quotes) where LETTER is one of options. Think step "
                    "by step before answering.",
    },
    "direct": {
        "vision": "Answer with the option letter from the given choices directly. The last line of your response "
                  "should be of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of "
                  "options.",
        "standard": "Answer with the option letter from the given choices directly.",
    },
}
METHODS = ("direct", "cot")
#: hub config names (``MMMU/MMMU_Pro``), in the paper's order
SETTINGS = ("standard (4 options)", "standard (10 options)", "vision")


def options_block(options: Sequence[str]) -> str:
    """``"A. opt\\nB. opt..."`` (``infer_*.py: parse_options``): letter, dot, space; no brackets, unlike MMMU."""
    return "\n".join(f"{chr(ord('A') + i)}. {o}" for i, o in enumerate(options))


def standard_prompt(question: str, options: Sequence[str], method: str) -> str:
    """Standard settings (``infer_*.py: construct_prompt``): ``{question}\\n{options}\\n{instruction}``.

    ``<image k>`` placeholders stay verbatim here; the official runners replace them by ``<image>``
    (GPT/Gemini) or ``[image]`` (transformers), which is the model adapter's business.
    """
    return f"{question}\n{options_block(options)}\n{PROMPTS[method]['standard']}"


def vision_prompt(method: str) -> str:
    """Vision setting: the instruction alone; question and options are only in the screenshot."""
    return PROMPTS[method]["vision"]


def mc_info(options: str | Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """``(index2ans, all_choices)``; ``options`` may be the dataset's Python-list string
    (``ast.literal_eval(str(options))`` as ``mmmu_process_results`` does; never eval)."""
    opts = ast.literal_eval(options) if isinstance(options, str) else list(options)
    letters = [chr(ord("A") + i) for i in range(len(opts))]
    return dict(zip(letters, [str(o) for o in opts])), letters


_STRIP_CHARS = (",", ".", "!", "?", ";", ":", "'")


def parse_answer(response, all_choices: Sequence[str], index2ans: Mapping[str, str],
                 rng: random.Random | None, answer_rule: bool = True) -> ParsedAnswer:
    """``evaluate.py: parse_multi_choice_response``, rule for rule; modes name the deciding rule.

    0. a dict response (an API error saved by the runner) is ``""`` (``mmmu_process_results``);
    1. ``answer``: text after the LAST ``"Answer:"`` (case-sensitive), stripped; the letters that occur
       in it as plain substrings; exactly one -> that letter, else fall through with the whole response;
    2. strip ``, . ! ? ; : '`` from both ends (each in turn), pad with one space each side;
    3. ``bracket``: ``"(L)"`` anywhere;
    4. ``letter``: ``"L "`` anywhere (QUIRK: no space required before L, so "PDF " counts for F,
       a pronoun "I " for option I, "J. A dramatic..." gives A);
    5. ``letter-dot``: ``"L."`` anywhere (QUIRK: new in MMMU-Pro; "e.g." is not matched, "U.S." would be);
    6. ``content``: option text, case-insensitive substring, only if the padded response has more than
       5 whitespace tokens;
    7. none -> ``rng.choice(all_choices)`` (mode ``random``, ``fallback=True``); ``rng=None`` -> None.
    ``answer_rule=False`` skips step 1 (NOT official: lmms-eval's ``parse_mmmu_multi_choice_response``, which
    its ``mmmu_pro`` tasks use, is steps 2-7).
    Several candidates: brackets -> latest ``"(L)"``; letters (either pass) -> latest ``" L "``
    (QUIRK: candidates from passes 4-5 may have no ``" L "`` at all: all -1 and the first candidate
    wins); content -> latest option text. Ties go to the first candidate (``np.argmax``).
    """
    if isinstance(response, dict):
        response = ""
    if not isinstance(response, str):
        # the official code would crash on ``rfind`` here (``None``, numbers); we treat it as empty
        response = ""
    choices = list(all_choices)
    pos = response.rfind("Answer:") if answer_rule else -1
    if pos != -1:
        tail = response[pos + len("Answer:"):].strip()
        matching = [c for c in choices if c in tail]  # QUIRK: plain substring ("Answer: B or C" -> none)
        if len(matching) == 1:
            return ParsedAnswer(matching[0], False, "answer")

    text = response
    for ch in _STRIP_CHARS:
        text = text.strip(ch)
    text = " " + text + " "

    candidates, mode = [c for c in choices if f"({c})" in text], "bracket"
    if not candidates:
        candidates, mode = [c for c in choices if f"{c} " in text], "letter"
    if not candidates:
        candidates, mode = [c for c in choices if f"{c}." in text], "letter-dot"
    if not candidates and len(text.split()) > 5:
        low = text.lower()
        candidates, mode = [c for c in choices if index2ans[c].lower() in low], "content"

    if not candidates:
        if rng is None or not choices:
            return ParsedAnswer(None, True, "none")
        return ParsedAnswer(rng.choice(choices), True, "random")
    if len(candidates) == 1:
        return ParsedAnswer(candidates[0], False, mode)
    if mode == "bracket":
        positions = [text.rfind(f"({c})") for c in candidates]
    elif mode == "content":
        low = text.lower()
        positions = [low.rfind(index2ans[c].lower()) for c in candidates]
    else:  # "letter" and "letter-dot" both look for " L " (official ``index_ans`` without brackets)
        positions = [text.rfind(f" {c} ") for c in candidates]
    best = 0
    for i, p in enumerate(positions):  # first maximum, like numpy.argmax
        if p > positions[best]:
            best = i
    return ParsedAnswer(candidates[best], False, mode)


def is_correct(parsed: str | None, answer) -> bool:
    """``parsed_pred == results["answer"]`` (``mmmu_process_results``): exact string equality."""
    return parsed is not None and parsed == answer
