"""The audit's input checks, as ``score-responses`` checks its inputs: numeric options in range, the file of this
benchmark, one row per item, the raw response (or the item marked), gold answers and question types, exact
official folders, and golds equal before two files are paired. Each refusal is one line naming file, item and
field (``DataError``); each tolerance is counted in a note the report prints.

More: docs/audit.md ("What the audit refuses").
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Sequence

from mmbench_lib.core.items import DataError
from mmbench_lib.tasks import mmmu_parser as mparse
from mmbench_lib.tasks import peer_rules
from mmbench_lib.tasks.audits import AUDITS

#: question types an audit item may carry (the tasks' normalised names); anything else is refused
QUESTION_TYPES = ("multiple-choice", "open", "short-answer", "true-false", "fill-in-the-blank")


def check_options(reported=None, expected=None, max_new_tokens=None) -> None:
    """``reported`` a finite percentage in [0, 100]; ``expected`` and ``max_new_tokens`` whole numbers >= 1."""
    if reported is not None:
        if isinstance(reported, bool) or not isinstance(reported, (int, float)) or not math.isfinite(reported) \
                or not 0 <= reported <= 100:
            raise ValueError(f"--reported {reported!r}: expected a percentage between 0 and 100")
    for name, v in (("--expected", expected), ("--max-new-tokens", max_new_tokens)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ValueError(f"{name} {v!r}: expected a whole number of at least 1")


# ------------------------------------------------------------------------------------ the file's benchmark

def _names(benchmark: str, attr: str) -> list[str]:
    rules = AUDITS[benchmark]
    return [n for n in getattr(rules, attr, ()) if n]


#: the task names of lmms-eval's sample logs (``samples_<task>_<date>.jsonl``) and VLMEvalKit's dataset names
#: (``<model>_<dataset>.tsv``) per benchmark; the longest name found in a file's name tells its benchmark
def file_benchmark(path) -> str | None:
    """The benchmark a peer file's NAME says it holds (lmms-eval task / VLMEvalKit dataset), else None."""
    name, best = Path(path).name, (0, None)
    for bench, rules in AUDITS.items():
        for token in (*getattr(rules, "LMMS_TASKS", ()), *getattr(rules, "VLMEVALKIT_DATASETS", ())):
            lmms = token.islower()
            pattern = rf"(?:^|_)samples_{re.escape(token)}(?:_|\.)" if lmms else rf"(?:^|_){re.escape(token)}(?:_|\.|$)"
            if re.search(pattern, name) and len(token) > best[0]:
                best = (len(token), bench)
    return best[1]


def check_benchmark(path, fmt: str, items: Sequence[dict], benchmark: str) -> None:
    """A peer file whose name or categories say another benchmark is refused in one line."""
    if fmt in ("lmms-eval", "vlmevalkit"):
        named = file_benchmark(path)
        if named is not None and named != benchmark:
            raise DataError(str(path), f"its name says a file of {named}, not {benchmark}: audit it with "
                                       f"--benchmark {named}")
    categories = getattr(AUDITS[benchmark], "categories", None)
    if fmt == "lmms-eval" and categories:  # SEED: each doc's category is one of the benchmark's
        allowed = set(map(str, categories.values()))
        bad = next((it for it in items if it.get("category") and str(it["category"]) not in allowed), None)
        if bad is not None:
            raise DataError(str(path), f"category {bad['category']!r} is not one of {benchmark}'s "
                                       f"({', '.join(sorted(allowed))}): a file of another benchmark?", bad["id"],
                            "category")


# --------------------------------------------------------------------------------------------- the rows

def mark_raw(row: dict, item: dict) -> dict:
    """An lmms-eval item whose raw ``resps`` holds no text (null, empty, NaN, an object) is scored as an empty
    response and marked ``response_problem`` -- never silently given the filtered response."""
    if peer_rules.first_text(row.get("resps")) is None:
        got = row.get("resps")
        item = {**item, "response": "", "response_problem": f"resps is {type(got).__name__} {str(got)[:40]!r}, not text"}
    return item


def one_per_id(path, items: list[dict], notes: list[str]) -> list[dict]:
    """One row per item: a repeated id keeps its first row, counted in a note."""
    seen, out, repeated = set(), [], []
    for it in items:
        if it["id"] in seen:
            repeated.append(it["id"])
            continue
        seen.add(it["id"])
        out.append(it)
    if repeated:
        notes.append(f"{path}: {len(repeated)} repeated ids counted once (the first row kept): {repeated[:5]}")
    return out


def _choices(it: dict) -> list[str]:
    return list(it.get("all_choices") or it.get("letters") or (it.get("index2ans") or {}))


def check_gold(path, items: Sequence[dict], options: bool = True, letters: Sequence[str] | None = None,
               multi: bool = False) -> None:
    """Each item's question type is known and its gold answer usable: present; a multiple-choice answer a letter
    (or a list of letters) among its options (``options``: an official file's options are checked by its own
    reader, as ``score-responses`` reads it, and kept as the official scorer keeps them); an open answer a string,
    a number or a list of them. ``letters``: the letters an answer may name whatever an item's options (MMMU-Pro:
    A-J, as its official reader keeps an item whose options string does not parse into its letters). ``multi``: a
    gold may be several letters in one string (CMMMU's multiple-answer questions, "AC")."""
    for it in items:
        qtype, answer = it.get("question_type"), it.get("answer")
        if qtype not in QUESTION_TYPES:
            raise DataError(str(path), f"question type {qtype!r} is not one of {list(QUESTION_TYPES)}; not scored",
                            it["id"], "question_type")
        if answer is None or (isinstance(answer, float) and answer != answer) or \
                (isinstance(answer, str) and not answer.strip()):
            raise DataError(str(path), "gold answer missing; not scored", it["id"], "answer")
        if qtype == "multiple-choice" and options and _choices(it):
            gold = mparse.parse_gold(answer) if isinstance(answer, str) and answer.lstrip().startswith("[") else answer
            golds = gold if isinstance(gold, list) else (list(gold.strip()) if multi and isinstance(gold, str) else [gold])
            allowed = list(letters) if letters else _choices(it)
            if not golds or not all(isinstance(g, str) and g.strip() in allowed for g in golds):
                raise DataError(str(path), f"gold answer {answer!r} names no option of {allowed}; not scored",
                                it["id"], "answer")
        elif isinstance(answer, bool) or not isinstance(answer, (str, int, float, list)):
            raise DataError(str(path), f"gold answer of type {type(answer).__name__}; expected text, a number or a list",
                            it["id"], "answer")


def golds_differ(a: Sequence[dict], b: Sequence[dict]) -> str | None:
    """Why two files' items cannot be paired (the same ids with different gold answers), else None."""
    gold_b = {it["id"]: it.get("answer") for it in b}
    differ = [i["id"] for i in a if i["id"] in gold_b and str(i.get("answer")).strip() != str(gold_b[i["id"]]).strip()]
    if differ:
        x = differ[0]
        ga = next(i.get("answer") for i in a if i["id"] == x)
        return (f"not paired: {len(differ)} shared ids have different gold answers (e.g. {x!r}: {ga!r} vs "
                f"{gold_b[x]!r}); the files score different questions")
    return None


# ------------------------------------------------------------------------------------ official folders

def subject_folders(root: Path, notes: list[str]) -> list[Path]:
    """MMMU's ``<Subject>/output.json`` folders read exactly: an ``output.json`` that is not a file, or two folders of
    one subject (full name and short key, or a copy), is refused in one line; folders that are not subjects are
    skipped and counted (as ``score-responses`` does)."""
    found: dict[str, Path] = {}
    unknown = []
    for sub in sorted(p for p in root.iterdir() if p.is_dir()):
        out = sub / "output.json"
        if not out.exists():
            continue
        if not out.is_file():
            raise DataError(str(out), "is a folder, not a file: an official output.json is a file of records")
        name = mparse.SUBJECT_ORDER.get(sub.name, sub.name)
        if name not in mparse.SUBJECT_TO_DISCIPLINE:
            unknown.append(sub.name)
            continue
        if name in found:
            raise DataError(str(sub), f"subject {name!r} has two folders ({found[name].name} and {sub.name}); keep one")
        found[name] = sub
    if unknown:
        notes.append(f"{root}: folders that are not subjects were skipped: {unknown[:5]}")
    return list(found.values())
