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

import re
from pathlib import Path

from mmbench_lib.core.items import DataError
from mmbench_lib.core.metrics import summarize
from mmbench_lib.tasks.base import get_task
from mmbench_lib.tasks.seed_results import LETTERS, is_scalar_id, read_questions, read_results  # noqa: F401 (re-exported)


def _read_questions(qpath: Path) -> dict[str, tuple[int, str]]:
    """``{question_id: (dimension, answer)}`` from the benchmark JSON; bad input raises ``DataError``."""
    return {q["question_id"]: (q["question_type_id"], q["answer"]) for q in read_questions(qpath)}


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


