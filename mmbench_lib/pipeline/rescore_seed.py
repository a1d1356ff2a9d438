"""Rescore SEED-Bench result files made elsewhere (official ``results.json`` format).

One ``{"question_id", "prediction"[, "gt_answer"]}`` object per line (JSONL despite the name,
docs/protocols.md §1.5). Tolerated, as the official files need: trailing commas, blank lines, a wrapping
``[...]``, and repeated ids (P-S5: appended reruns; de-duplicated, last wins, counted).

Gold answers with surrounding whitespace (the SEED-Bench-2 GPT-4V file has 18, e.g. ``"A "``) are
scored as the leaderboard scored them: compared as written, so they never equal a letter. That is
what reproduces the published per-dimension values (docs/protocols.md §2.5: 12 Chart 45.3, 19 64.8);
each is counted in ``input.normalisations``, with how many would match once stripped.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from mmbench_lib.tasks.base import get_task
from mmbench_lib.core.items import DataError, read_utf8
from mmbench_lib.core.metrics import summarize


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
    text = read_utf8(path).strip()
    if text.startswith("["):
        norm["wrapping_list"] = 1
        try:
            lines = [json.dumps(x) for x in json.loads(re.sub(r",\s*]\s*$", "]", text))]
        except json.JSONDecodeError:
            lines = text.strip("[]").splitlines()
    else:
        lines = text.splitlines()
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if line.endswith(","):
            norm["comma_terminated_lines"] += 1
        line = line.rstrip(",").strip()
        if not line:
            norm["blank_lines"] += 1
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(str(path), f"line {n} is not a JSON object ({e.msg})") from None
        if not isinstance(rec, dict):
            raise DataError(str(path), f"line {n} is not a JSON object (got {type(rec).__name__})")
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


def _read_questions(qpath: Path) -> dict[str, tuple[int, str]]:
    """``{question_id: (dimension, answer)}`` from the benchmark JSON; bad input raises ``DataError``."""
    if not qpath.is_file():
        raise DataError(str(qpath), "questions file not found")
    try:
        data = json.loads(read_utf8(qpath))
    except json.JSONDecodeError as e:
        raise DataError(str(qpath), f"not valid JSON ({e.msg} at line {e.lineno})") from None
    questions = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(questions, list):
        raise DataError(str(qpath), "expected an object with a list 'questions'", None, "questions")
    gold = {}
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
        if qid in gold:
            raise DataError(str(qpath), f"questions[{i}]: id given twice (a questions file holds each question once)",
                            qid, "question_id")
        gold[qid] = (dim, q["answer"])
    if not gold:
        raise DataError(str(qpath), "no questions in the file")
    return gold


def score_predictions(benchmark: str, predictions, questions=None) -> dict:
    """Per-dimension and group metrics for an official results file.

    ``questions``: the benchmark JSON (dimension ids and answers). For SEED-2 without it, the
    dimension comes from the ``<dim>_<k>`` question id and the answer from ``gt_answer``.
    """
    task = get_task(benchmark)
    preds, report = read_results(predictions)
    gold = {}
    if questions is not None:
        gold = _read_questions(Path(questions))
    elif task.results_need_questions:
        raise ValueError(f"{task.title} result files carry no dimension: pass --questions (the benchmark's JSON)")
    rows, unknown = [], []
    for qid, rec in preds.items():
        if qid in gold:
            dim, answer = gold[qid]
        else:
            m = re.match(r"^(\d+)_\d+$", qid)
            if questions is not None or not m or "gt_answer" not in rec:
                unknown.append(qid)
                continue
            dim, answer = int(m.group(1)), rec["gt_answer"]
        if dim not in task.dimensions:
            unknown.append(qid)
            continue
        pred = str(rec["prediction"]).strip()
        rows.append({"id": qid, "dimension_id": dim, "dimension": task.dimensions[dim][0], "status": "ok",
                     "prediction": pred, "answer": answer, "correct": pred == answer, "num_choices": 4})
    if not rows:
        no_gold = questions is None and any("gt_answer" not in r for r in preds.values())
        why = ("its lines carry no 'gt_answer': pass --questions (the benchmark's JSON)" if no_gold else
               f"none of its {len(unknown)} ids is a question of {task.title}" + ("" if questions is None else f" in {questions}"))
        raise DataError(str(predictions), f"no prediction could be scored: {why}")
    summary = summarize(rows, task.groups, partial=True)  # files made elsewhere may cover only some dimensions
    missing = sorted(set(gold) - set(preds)) if gold else []
    summary["input"] = {**report, "predictions": len(preds), "scored": len(rows), "unknown_ids": unknown[:50],
                        "n_unknown_ids": len(unknown), "missing_from_predictions": len(missing),
                        "missing_examples": missing[:20]}
    summary["benchmark"] = benchmark
    return summary


