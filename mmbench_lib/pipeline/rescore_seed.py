"""Rescore SEED-Bench result files made elsewhere (official ``results.json`` format).

One ``{"question_id", "prediction"[, "gt_answer"]}`` object per line (JSONL despite the name,
spec §1.5). Tolerated, as the official files need: trailing commas, blank lines, a wrapping
``[...]``, and repeated ids (P-S5: appended reruns; de-duplicated, last wins, counted).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from mmbench_lib import tasks as benchmarks
from mmbench_lib.core.items import DataError
from mmbench_lib.core.metrics import summarize


def read_results(path) -> tuple[dict[str, dict], dict]:
    """Predictions by question id (last wins) and a report of duplicates and skipped lines."""
    path = Path(path)
    if not path.is_file():
        raise DataError(str(path), "results file not found")
    records, dup_ids, conflicting = {}, [], []
    text = path.read_text(encoding="utf-8").strip()
    if text.startswith("["):
        try:
            lines = [json.dumps(x) for x in json.loads(re.sub(r",\s*]\s*$", "]", text))]
        except json.JSONDecodeError:
            lines = text.strip("[]").splitlines()
    else:
        lines = text.splitlines()
    for n, line in enumerate(lines, 1):
        line = line.strip().rstrip(",").strip()
        if not line:
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(str(path), f"line {n} is not a JSON object ({e.msg})") from None
        for key in ("question_id", "prediction"):
            if key not in rec:
                raise DataError(str(path), f"line {n}: field missing", None, key)
        qid = str(rec["question_id"])
        if qid in records:
            dup_ids.append(qid)
            if records[qid]["prediction"] != rec["prediction"]:
                conflicting.append(qid)
        records[qid] = rec
    return records, {"duplicate_lines": len(dup_ids), "duplicate_ids": sorted(set(dup_ids)),
                     "conflicting_duplicates": sorted(set(conflicting))}


def score_predictions(benchmark: str, predictions, questions=None) -> dict:
    """Per-dimension and group metrics for an official results file.

    ``questions``: the benchmark JSON (dimension ids and answers). For SEED-2 without it, the
    dimension comes from the ``<dim>_<k>`` question id and the answer from ``gt_answer``.
    """
    mod = benchmarks.get(benchmark)
    preds, report = read_results(predictions)
    gold = {}
    if questions is not None:
        qpath = Path(questions)
        data = json.loads(qpath.read_text(encoding="utf-8"))
        for q in data.get("questions", []):
            gold[str(q["question_id"])] = (int(q["question_type_id"]), q["answer"])
    elif benchmark in ("seed", "seed1"):
        raise ValueError("SEED-Bench v1 result files carry no dimension: pass --questions SEED-Bench.json")
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
        if dim not in mod.DIMENSIONS:
            unknown.append(qid)
            continue
        pred = str(rec["prediction"]).strip()
        rows.append({"id": qid, "dimension_id": dim, "dimension": mod.DIMENSIONS[dim][0], "status": "ok",
                     "prediction": pred, "answer": answer, "correct": pred == answer, "num_choices": 4})
    summary = summarize(rows, mod.GROUPS, partial=True)  # files made elsewhere may cover only some dimensions
    missing = sorted(set(gold) - set(preds)) if gold else []
    summary["input"] = {**report, "predictions": len(preds), "scored": len(rows), "unknown_ids": unknown[:50],
                        "n_unknown_ids": len(unknown), "missing_from_predictions": len(missing),
                        "missing_examples": missing[:20]}
    summary["benchmark"] = benchmark
    return summary
