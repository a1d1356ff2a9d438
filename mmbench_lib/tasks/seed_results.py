"""Reading SEED-Bench's official prediction files and question JSON (shared by ``score-predictions`` and the audit).

``results.json`` as SEED-Bench's ``eval.py`` appends it: one ``{"question_id", "prediction"}`` object per line;
the published leaderboard files add ``gt_answer``. Tolerated and counted: trailing commas, blank lines, a wrapping
``[...]``, repeated ids (last wins), gold or predictions with surrounding whitespace (kept as written).
Anything else is a one-line ``DataError`` naming the file, line, item and field.

More: docs/protocols.md §1.5, §2.5; docs/audit.md (SEED section).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from mmbench_lib.core.items import DataError, read_utf8, regular_file
from mmbench_lib.core.jsonl import read_rows, rows_of

#: the answer letters of SEED-Bench v1 and SEED-Bench-2 (four options; docs/protocols.md §1.1, §2.1)
LETTERS = ("A", "B", "C", "D")


def is_scalar_id(value) -> bool:
    """An id is a string or an integer (not a bool, a float, a list or an object)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def read_results(path) -> tuple[dict[str, dict], dict]:
    """Predictions by question id (last wins) and a report of duplicates and skipped lines."""
    path = Path(path)
    if not path.is_file():
        raise DataError(str(path), "results file not found")
    records, dup_ids, conflicting = {}, [], []
    norm = {"wrapping_list": 0, "comma_terminated_lines": 0, "blank_lines": 0, "gold_with_whitespace": 0,
            "gold_with_whitespace_matching_if_stripped": 0, "predictions_stripped": 0}
    # core.jsonl reads the lines (bounded; comma-terminated lines and blank lines counted); a file wrapped in [...]
    # is read as a JSON list, or line by line without its brackets
    read = {"objects": True, "comma_terminated": True, "counts": norm, "invalid": "not a JSON object"}
    if _wrapped(path):
        norm["wrapping_list"] = 1
        text = read_utf8(path).strip()
        try:
            lines = enumerate([json.dumps(x) for x in json.loads(re.sub(r",\s*]\s*$", "]", text))], 1)
        except json.JSONDecodeError:
            lines = enumerate(text.strip("[]").splitlines(), 1)
        rows = rows_of(lines, path, **read)
    else:
        rows = read_rows(path, **read)
    for n, rec in rows:
        for key in ("question_id", "prediction"):
            if key not in rec:
                raise DataError(str(path), f"line {n}: field missing", None, key)
        if not is_scalar_id(rec["question_id"]):
            raise DataError(str(path), f"line {n}: an id is a string or an integer, got {type(rec['question_id']).__name__}",
                            None, "question_id")
        qid = str(rec["question_id"])
        if not isinstance(rec["prediction"], str):
            raise DataError(str(path), f"line {n}: expected the predicted letter as a string, got "
                                       f"{type(rec['prediction']).__name__}", qid, "prediction")
        gt = rec.get("gt_answer")
        if "gt_answer" in rec and not (isinstance(gt, str) and gt.strip() in LETTERS):
            raise DataError(str(path), f"line {n}: gold answer {gt!r} is not one of {list(LETTERS)}",
                            qid, "gt_answer")
        if isinstance(gt, str) and gt != gt.strip():  # kept as written: the leaderboard compared it so
            norm["gold_with_whitespace"] += 1
            norm["gold_with_whitespace_matching_if_stripped"] += rec["prediction"].strip() == gt.strip()
        if rec["prediction"] != rec["prediction"].strip():
            norm["predictions_stripped"] += 1
        if qid in records:
            dup_ids.append(qid)
            if records[qid]["prediction"] != rec["prediction"]:
                conflicting.append(qid)
        records[qid] = rec
    if not records:
        raise DataError(str(path), "no predictions in the file (nothing to score)")
    norm["duplicate_lines_last_kept"] = len(dup_ids)
    return records, {"duplicate_lines": len(dup_ids), "duplicate_ids": sorted(set(dup_ids)),
                     "conflicting_duplicates": sorted(set(conflicting)), "normalisations": norm}


def _wrapped(path: Path) -> bool:
    """Whether the file opens with ``[`` (a JSON list of the records, not JSON lines)."""
    with open(regular_file(path), "rb") as f:
        head = f.read(1 << 16).lstrip()
    return head.startswith(b"[")


def read_questions(qpath) -> list[dict]:
    """The question objects of the benchmark JSON (``{"questions": [...]}``), checked: ``question_id`` (unique),
    an integer ``question_type_id``, an ``answer`` among :data:`LETTERS`; bad input raises ``DataError``."""
    qpath = Path(qpath)
    if not qpath.is_file():
        raise DataError(str(qpath), "questions file not found")
    try:
        data = json.loads(read_utf8(qpath))
    except json.JSONDecodeError as e:
        raise DataError(str(qpath), f"not valid JSON ({e.msg} at line {e.lineno})") from None
    questions = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(questions, list):
        raise DataError(str(qpath), "expected an object with a list 'questions'", None, "questions")
    seen, out = set(), []
    for i, q in enumerate(questions):
        if not isinstance(q, dict):
            raise DataError(str(qpath), f"questions[{i}] is not an object")
        for key in ("question_id", "question_type_id", "answer"):
            if key not in q:
                raise DataError(str(qpath), f"questions[{i}]: field missing", q.get("question_id"), key)
        if not is_scalar_id(q["question_id"]):
            raise DataError(str(qpath), f"questions[{i}]: an id is a string or an integer, got "
                                        f"{type(q['question_id']).__name__}", None, "question_id")
        try:
            dim = int(q["question_type_id"])
        except (TypeError, ValueError):
            raise DataError(str(qpath), f"questions[{i}]: not an integer", q["question_id"], "question_type_id") from None
        if q["answer"] not in LETTERS:
            raise DataError(str(qpath), f"questions[{i}]: gold answer {q['answer']!r} is not one of {list(LETTERS)}",
                            q["question_id"], "answer")
        qid = str(q["question_id"])
        if qid in seen:
            raise DataError(str(qpath), f"questions[{i}]: id given twice (a questions file holds each question once)",
                            qid, "question_id")
        seen.add(qid)
        out.append({**q, "question_id": qid, "question_type_id": dim})
    if not out:
        raise DataError(str(qpath), "no questions in the file")
    return out


def dimension_of_id(qid: str) -> int | None:
    """SEED-Bench-2's ``<dim>_<k>`` question id gives its dimension; other ids give None."""
    m = re.match(r"^(\d+)_\d+$", qid)
    return int(m.group(1)) if m else None
