"""The per-item steps the official MMMU and CMMMU scorers share (``mmmu_official``, ``cmmmu_official``): a response
as text (marked when it was not a string), the fallback RNG, the per-key tally, the warnings.

More: docs/modules.md (``tasks/mmmu_official.py``).
"""
from __future__ import annotations

import random
import warnings
from collections import OrderedDict

from mmbench_lib.core.metrics import entry


def scalar_id(value) -> bool:
    """An id is a string or an integer (not a bool, a float, a list or an object)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def response_text(value) -> tuple[str, str | None]:
    """The response as a string and, when it was not a non-empty string, why (marked per item)."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value), f"not a string ({type(value).__name__}); used str()"
    return "", f"not a string ({type(value).__name__}); treated as empty"


def mark_response(row: dict, response: str, problem: str | None, fallback: bool, counts: dict) -> None:
    """Mark an empty or non-string response on the row and count it and the random fallback (``counts``:
    ``fallbacks``, ``empty_responses``, ``non_string_responses``)."""
    row["response_empty"] = not response.strip()
    counts["fallbacks"] += fallback
    counts["empty_responses"] += row["response_empty"]
    if problem:
        row["response_error"] = problem
        counts["non_string_responses"] += 1


def warn_all(warn: list[str]) -> list[str]:
    """Each problem of the inputs as a Python warning too, attributed to the scorer's caller (the summary keeps
    them as a list)."""
    for w in warn:
        warnings.warn(w, stacklevel=3)
    return warn


def tally(rows: list[dict], key: str) -> dict:
    """``core.metrics`` entries per value of ``key`` over the judged rows, in first-seen order."""
    out: dict = OrderedDict()
    for r in rows:
        if r.get("correct") is None:
            continue
        c, n = out.get(r[key], (0, 0))
        out[r[key]] = (c + bool(r["correct"]), n + 1)
    return {k: entry(c, n) for k, (c, n) in out.items()}


def seed_text(seed) -> str:
    return "given generator" if isinstance(seed, random.Random) else str(seed)


def fallback_rng(use_random: bool, seed) -> random.Random | None:
    """The fallback RNG: ``random.Random(seed)`` (official: 42), a given ``random.Random`` as is, or none."""
    if not use_random:
        return None
    return seed if isinstance(seed, random.Random) else random.Random(seed)
