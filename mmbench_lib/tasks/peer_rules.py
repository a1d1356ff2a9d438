"""The versions of the peers' scoring rules a reproduction audit applies, and the version a file's record picks.

VLMEvalKit ``can_infer`` (open-compass/VLMEvalKit ``vlmeval/utils/matching_util.py``, read at e8e78f05):
``before #1175`` (c6bdffd3, 2024-03-19: a letter anywhere, text pass on any answer), ``#1175`` (c3371551,
2025-08-04: the letter among the last five tokens, text pass only for short answers), ``#1552`` (a67ace50,
2026-06-17: then "answer is X"; current). #1560 (1445ec4f) changed ``extract_characters_regex``, not ``can_infer``.
A VLMEvalKit run folder ``T<YYYYMMDD>_G<commit>`` (run.py since #583) picks the version by date; lmms-eval's
``git_hash`` (its ``*_results.json``, #1378) is reported: its audited rules have one version (to 75571cfe).

More: docs/audit.md ("Rule versions").
"""
from __future__ import annotations

import json
import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RuleVersion:
    """One version of a peer's rule: its name, the commit and date it took effect, the source it implements."""

    name: str
    commit: str
    date: str  # YYYY-MM-DD
    source: str
    change: str

    def describe(self) -> str:
        return f"{self.name} ({self.commit}, {self.date})"


_MATCHING = "open-compass/VLMEvalKit vlmeval/utils/matching_util.py"
#: VLMEvalKit ``can_infer`` versions, oldest first (module doc); the last is the current one
CAN_INFER = (
    RuleVersion("before #1175", "c6bdffd3", "2024-03-19", _MATCHING,
                "one option letter among the tokens, anywhere; option-text pass on any answer"),
    RuleVersion("#1175", "c3371551", "2025-08-04", _MATCHING,
                "the letter among the last five tokens; option-text pass only for short answers"),
    RuleVersion("#1552", "a67ace50", "2026-06-17", _MATCHING, "then 'answer is X'; current (unchanged at e8e78f05)"),
)
CURRENT = CAN_INFER[-1]
_ACTIVE: ContextVar[RuleVersion] = ContextVar("can_infer_version", default=CURRENT)


def can_infer_version(name: str) -> RuleVersion:
    """A ``can_infer`` version by name ("#1175"), commit ("c3371551") or date ("2025-09-01": the version then in
    force); ValueError naming the versions otherwise."""
    key = str(name).strip()
    for v in CAN_INFER:
        if key in (v.name, v.commit) or (len(key) >= 7 and v.commit.startswith(key)):
            return v
    if re.fullmatch(r"\d{4}-?\d{2}-?\d{2}", key):
        d = key.replace("-", "")
        day = f"{d[:4]}-{d[4:6]}-{d[6:]}"
        return [v for v in CAN_INFER if v.date <= day][-1] if day >= CAN_INFER[0].date else CAN_INFER[0]
    raise ValueError(f"unknown VLMEvalKit can_infer version {name!r}; use one of "
                     + ", ".join(v.describe() for v in CAN_INFER) + ", or a date YYYY-MM-DD")


def active() -> RuleVersion:
    """The ``can_infer`` version in force (:func:`using`; the current one by default)."""
    return _ACTIVE.get()


@contextmanager
def using(version: RuleVersion):
    """Apply ``version`` of ``can_infer`` inside the block (the audit's per-file choice)."""
    token = _ACTIVE.set(version)
    try:
        yield version
    finally:
        _ACTIVE.reset(token)


def first_text(value):
    """The first string inside a peer's response field (lmms-eval ``resps`` / ``filtered_resps``: a list per request,
    itself a list or a string), else None. The one copy the audit modules share."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def present(v) -> bool:
    """A cell that holds a value (not None, NaN or empty): what a VLMEvalKit table read by pandas leaves."""
    return v is not None and not (isinstance(v, float) and v != v) and str(v) != ""


_VLM_RUN = re.compile(r"T(\d{8})_G([0-9a-f]{7,40})")


def recorded_version(path, fmt: str) -> tuple[str, str] | None:
    """What a file records of the harness that wrote it: ``(harness, text)``, or None.

    VLMEvalKit: its ``T<YYYYMMDD>_G<commit>`` run folder among the path's parts. lmms-eval: ``git_hash`` (and
    the date) of the ``*_results.json`` beside the sample log (the one with the log's date prefix, else the only one)."""
    path = Path(path)
    if fmt == "vlmevalkit":
        for part in reversed(path.resolve().parts):
            m = _VLM_RUN.fullmatch(part) or _VLM_RUN.search(part)
            if m:
                return "vlmevalkit", f"{m.group(1)[:4]}-{m.group(1)[4:6]}-{m.group(1)[6:]} {m.group(2)}"
        return None
    if fmt == "lmms-eval":
        prefix = path.name.split("_samples_")[0] if "_samples_" in path.name else None
        found = sorted(path.parent.glob("*_results.json")) + sorted(path.parent.glob("results*.json"))
        pick = [p for p in found if prefix and p.name.startswith(prefix)] or (found if len(found) == 1 else [])
        for p in pick:
            try:
                data = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and data.get("git_hash"):
                return "lmms-eval", f"{data['git_hash']} (from {p.name})"
    return None


def pick(path, fmt: str, asked: str | None = None) -> tuple[RuleVersion, str]:
    """The ``can_infer`` version for a file and why: ``asked`` (a name, commit or date), else the version in
    force at the date the file's VLMEvalKit run folder records, else the current one."""
    if asked:
        v = can_infer_version(asked)
        return v, f"VLMEvalKit can_infer {v.describe()}: asked for"
    rec = recorded_version(path, fmt)
    if rec and rec[0] == "vlmevalkit":
        day, commit = rec[1].split()
        v = can_infer_version(day)
        return v, f"VLMEvalKit can_infer {v.describe()}: the rule in force on {day}, the date of the file's run folder (commit {commit})"
    text = f"VLMEvalKit can_infer {CURRENT.describe()}: the current rule"
    if rec and rec[0] == "lmms-eval":
        text += f"; lmms-eval {rec[1]}: its rule here has one version over the commits read (to 75571cfe)"
    elif fmt == "vlmevalkit":
        text += " (the file records no VLMEvalKit run folder T<date>_G<commit>)"
    return CURRENT, text
