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

__all__ = ["Extracted", "EXTRACTORS", "extract", "extract_all", "lmms_eval_letter", "vlmevalkit_letter"]

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


def vlmevalkit_letter(response: str, letters: Sequence[str], choices: Sequence[str]) -> Extracted:
    """VLMEvalKit exact matching (module doc): modes ``option``, ``text``, ``refusal`` or ``none``."""
    text = response or ""
    if any(r in text for r in REFUSALS):
        return Extracted(None, "refusal")
    tokens = _SPACED.sub(" ", text).split()
    found = [L for L in letters if L in tokens]
    if len(found) == 1:
        return Extracted(found[0], "option")
    if not found and "Z" in tokens:
        return Extracted(None, "refusal")
    low = text.lower()
    hits = [L for L, c in zip(letters, choices) if str(c).lower() in low]
    if len(hits) == 1:
        return Extracted(hits[0], "text")
    return Extracted(None, "none")


#: extractor name -> function(response, letters, choices)
EXTRACTORS = {"lmms-eval": lmms_eval_letter, "vlmevalkit": vlmevalkit_letter}


def extract(name: str, response: str, letters: Sequence[str], choices: Sequence[str]) -> Extracted:
    try:
        fn = EXTRACTORS[name]
    except KeyError:
        raise ValueError(f"unknown letter extractor {name!r}; available: {sorted(EXTRACTORS)}") from None
    return fn(response, letters, choices)


def extract_all(response: str, letters: Sequence[str], choices: Sequence[str]) -> dict[str, Extracted]:
    """Every extractor's reading of one response (a run stores them all, as ranking stores both reductions)."""
    return {name: fn(response, letters, choices) for name, fn in EXTRACTORS.items()}
