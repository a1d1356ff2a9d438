"""Letter extraction from *generated* answers to lettered multiple choice: a NON-PAPER protocol.

SEED-Bench (§3.4) and SEED-Bench-2 (§3.4) rank the choices by likelihood and ask for no letter.
Two harnesses instead let the model write an answer with the options listed in the prompt and read a
letter out of the text (docs/protocols.md §1.4, P-S8). The rules below are paraphrased from their sources; their
numbers are not comparable with the papers' ranking numbers.

More: docs/modules.md, ``mmbench_lib/tasks/letters.py``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from mmbench_lib.tasks import peer_rules

__all__ = ["Extracted", "EXTRACTORS", "extract", "extract_all", "lmms_eval_letter", "mmstar_letter",
           "vlmevalkit_letter", "vlmevalkit_infer"]

#: VLMEvalKit's refusal phrases (``can_infer_option``): any of them answers "Z"
REFUSALS = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)
_SPACED = re.compile(r"[.()\[\],:;!*#{}]")


@dataclass(frozen=True)
class Extracted:
    """One extraction: ``letter`` (``None`` when nothing was found) and the rule that decided."""

    letter: str | None
    mode: str


def lmms_eval_letter(response: str, letters: Sequence[str] = (), choices: Sequence[str] = ()) -> Extracted:
    """lmms-eval ``seedbench``: the first character of the stripped response (mode ``first-char``);
    an empty response gives ``None`` (mode ``empty``). ``letters``/``choices`` are not used."""
    text = (response or "").strip()
    return Extracted(text[0], "first-char") if text else Extracted(None, "empty")


_VERBOSE = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")


def vlmevalkit_infer(answer: str, choices: dict) -> Extracted:
    """VLMEvalKit ``can_infer`` (``vlmeval/utils/matching_util.py`` at e8e78f0: ``can_infer_option`` with its
    letter-position check and "answer is X" pattern, then ``can_infer_text``) over ``choices`` (letter -> text);
    an older version inside ``peer_rules.using(version)`` (the position and length checks came with #1175, the
    "answer is X" pattern with #1552).
    Modes: ``option`` (one letter token among the last five), ``answer-is``, ``text`` (exactly one option text),
    ``refusal`` (VLMEvalKit's "Z": a refusal phrase or a lone "Z"; no letter) or ``none``."""
    answer = str(answer or "")
    version = peer_rules.active().name  # older versions: tasks/peer_rules.py (#1175 added the position and length
    if "Failed to obtain answer via API" not in answer:  # checks, #1552 "answer is X"); that answer skips the option pass
        if any(r in answer for r in REFUSALS):
            return Extracted(None, "refusal")
        tokens = [t.strip() for t in _SPACED.sub(" ", answer).split()]
        found = [L for L in choices if L in tokens]
        if len(found) == 1:
            if version == "before #1175" or tokens.index(found[0]) > len(tokens) - 5:
                return Extracted(found[0], "option")
        elif not found and "Z" in tokens:
            return Extracted(None, "refusal")
        m = _VERBOSE.search(answer) if version == "#1552" else None
        if m and m.group(1).upper() in choices:
            return Extracted(m.group(1).upper(), "answer-is")
    low = answer.lower()
    if version != "before #1175" and len(low) > 2 * sum(len(str(v)) for v in choices.values()):
        return Extracted(None, "none")
    hits = [L for L, c in choices.items() if str(c).lower() in low]
    return Extracted(hits[0], "text") if len(hits) == 1 else Extracted(None, "none")


def vlmevalkit_can_infer(answer: str, choices: dict) -> str | None:
    """VLMEvalKit ``can_infer`` as the audits apply it (:func:`vlmevalkit_infer`): the letter, "Z" (refusal), or None
    (nothing inferred)."""
    got = vlmevalkit_infer(answer, choices)
    return "Z" if got.mode == "refusal" else got.letter


def vlmevalkit_letter(response: str, letters: Sequence[str], choices: Sequence[str]) -> Extracted:
    """VLMEvalKit exact matching (:func:`vlmevalkit_infer`) over the lettered options."""
    return vlmevalkit_infer(response, dict(zip(letters, choices)))


def mmstar_letter(response: str, letters: Sequence[str] = (), choices: Sequence[str] = ()) -> Extracted:
    """MMStar's official rule (``MMStar_eval`` in ``eval/vlmeval/evaluate/mmstar.py``, MMStar-Benchmark/MMStar at
    88f243a; lmms-eval's mmstar ``exact_match`` is the same): the response lower-cased, stripped, newlines made
    spaces; the letter is its first character (mode ``first-char``), or the one after a leading ``(``
    (``paren``), ``option `` (``option``) or ``the answer is `` (``answer-is``); nothing there: ``None``
    (``empty``; the official ``try`` counts it wrong). Upper-cased, so it compares with the gold letter as the
    official ``answer == predict[k]`` does for the letters A-D. ``letters``/``choices`` are not used."""
    p = str(response if response is not None else "").lower().strip().replace("\n", " ")
    for prefix, mode in (("(", "paren"), ("option ", "option"), ("the answer is ", "answer-is")):
        if p.startswith(prefix):
            k = len(prefix)
            return Extracted(p[k].upper(), mode) if len(p) > k else Extracted(None, "empty")
    return Extracted(p[0].upper(), "first-char") if p else Extracted(None, "empty")


#: extractor name -> function(response, letters, choices)
EXTRACTORS = {"lmms-eval": lmms_eval_letter, "vlmevalkit": vlmevalkit_letter, "mmstar": mmstar_letter}
#: the extractors every generated-letter row stores (a recipe's own extractor is stored beside them)
HARNESS_EXTRACTORS = ("lmms-eval", "vlmevalkit")


def extract(name: str, response: str, letters: Sequence[str], choices: Sequence[str]) -> Extracted:
    try:
        fn = EXTRACTORS[name]
    except KeyError:
        raise ValueError(f"unknown letter extractor {name!r}; available: {sorted(EXTRACTORS)}") from None
    return fn(response, letters, choices)


def extract_all(response: str, letters: Sequence[str], choices: Sequence[str], also: str = "") -> dict[str, Extracted]:
    """The harness extractors' readings of one response, and ``also``'s (a recipe's own extractor) when given
    (a run stores them all, as ranking stores both reductions)."""
    names = dict.fromkeys((*HARNESS_EXTRACTORS, *([also] if also else [])))
    return {name: extract(name, response, letters, choices) for name in names}
