"""MMMU items from other harnesses' files, and the rule sets a reproduction audit re-scores them with.

More: docs/modules.md, ``mmbench_lib/tasks/mmmu_audit.py``.
"""
from __future__ import annotations

import ast
import random
import re
import string
from typing import Callable, Sequence

from mmbench_lib.tasks import peer_rules
from mmbench_lib.tasks import mmmu_parser as mparse
from mmbench_lib.tasks.letters import vlmevalkit_can_infer
from mmbench_lib.tasks.thinking import strip_trace

BENCHMARK = "mmmu"
#: the audit demo (``mmbench_lib/demo/audit.py``): the own run's data filters and settings, the peer files' names
DEMO_FILTERS = {"split": "validation"}
DEMO_RUN: dict = {}
DEMO_FILES = {"lmms-eval": "samples_mmmu_val_demo.jsonl", "vlmevalkit": "demo_MMMU_DEV_VAL.tsv"}
#: lmms-eval's MMMU metric field (``mmmu_process_results``)
LMMS_EVAL_METRIC = "mmmu_acc"
#: the names a peer file of MMMU carries: lmms-eval tasks, VLMEvalKit datasets (``pipeline/audit_inputs.py``)
LMMS_TASKS = ("mmmu", "mmmu_val", "mmmu_test", "mmmu_dev")
VLMEVALKIT_DATASETS = ("MMMU_DEV_VAL", "MMMU_TEST")
LETTERS = string.ascii_uppercase


def _item(item_id, question_type, all_choices, index2ans, answer, response, **extra) -> dict:
    qtype = mparse.normalize_question_type(str(question_type))
    return {"id": str(item_id), "subject": mparse.subject_from_id(str(item_id)), "question_type": qtype,
            "all_choices": list(all_choices), "index2ans": dict(index2ans), "answer": answer,
            "response": response if isinstance(response, str) else ("" if response is None else str(response)),
            **extra}


_first_text = peer_rules.first_text  # one copy: tasks/peer_rules.py


def from_official(rec: dict) -> dict:
    """One record of an official ``output.json`` (already checked by ``score-responses``' reader)."""
    return _item(rec["id"], rec["question_type"], rec.get("all_choices") or [], rec.get("index2ans") or {},
                 rec.get("answer"), rec.get("response"))


def from_lmms_eval(row: dict) -> dict:
    """One lmms-eval sample-log row as an item: the raw response (``resps``, before lmms-eval's own filters and
    reasoning-tag strip), and ``own_correct`` from the row's ``mmmu_acc.parsed_pred`` by their rule."""
    doc = row["doc"]
    options = doc.get("options", "[]")
    index2ans, all_choices = mparse.mc_info(ast.literal_eval(options) if isinstance(options, str) else options)
    raw = _first_text(row.get("resps"))
    response = raw if raw is not None else _first_text(row.get("filtered_resps"))
    it = _item(doc["id"], doc["question_type"], all_choices, index2ans, doc.get("answer"), response,
               doc_id=row.get("doc_id"), filtered=_first_text(row.get("filtered_resps")))
    metric = row.get(LMMS_EVAL_METRIC)
    if isinstance(metric, dict) and isinstance(metric.get("parsed_pred"), list):
        it["own_correct"] = _lmms_eval_correct(it, metric["parsed_pred"])
    return it


def from_vlmevalkit(row: dict) -> dict:
    """One VLMEvalKit prediction row as an item: options from the letter columns (none: an open question)."""
    index2ans = {L: str(row[L]) for L in LETTERS if _present(row.get(L))}
    qtype = "multiple-choice" if index2ans else "open"
    prediction = row.get("prediction") if _present(row.get("prediction")) else ""  # an empty cell reads as NaN
    return _item(row["id"], qtype, list(index2ans), index2ans, row.get("answer"), prediction, index=row.get("index"))


_present = peer_rules.present


def from_task_item(item) -> dict:
    """A question of the task's own data copy (``Task.load_items``: any layout the task declares) as a gold item."""
    return _item(item.id, item.question_type, item.letters, dict(zip(item.letters, item.choices)), item.answer, "",
                 split=item.split)


def with_gold(row: dict, gold: dict) -> dict:
    """A plain ``{id, response}`` row with the question fields of its gold item."""
    return {**gold, "response": row["response"] if isinstance(row.get("response"), str) else "",
            **{k: v for k, v in row.items() if k not in ("id", "response")}}


# ------------------------------------------------------------------------------------------------ rules

def _gold(it):
    return mparse.parse_gold(it["answer"])


def _official(items: Sequence[dict], seed=42, text=lambda r: r) -> list[bool]:
    """The official parser and evaluation (docs/protocols.md §3.4-3.8) over ``text(response)``."""
    by_subject: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        by_subject.setdefault(it["subject"], []).append(i)
    rng = random.Random(seed)
    out = [False] * len(items)
    for _subject, i in mparse.official_order(by_subject):
        it = items[i]
        response = text(it["response"])
        if it["question_type"] == "multiple-choice":
            pred = mparse.parse_multi_choice(response, it["all_choices"], it["index2ans"], rng).pred
            out[i] = pred is not None and mparse.eval_multi_choice(_gold(it), pred)
        else:
            out[i] = mparse.eval_open(_gold(it), mparse.parse_open(response))
    return out


def _lmms_eval_correct(it: dict, parsed_preds: Sequence) -> bool:
    """``evaluate_mmmu`` of lmms-eval over the stored ``parsed_pred`` list (module doc)."""
    for pred in parsed_preds:
        if it["question_type"] == "multiple-choice":
            if mparse.eval_multi_choice(_gold(it), pred):
                return True
        elif mparse.eval_open(_gold(it), pred):  # pred is a string: its characters are the predictions
            return True
    return False


def lmms_eval_preds(items: Sequence[dict], seed=0) -> list[str]:
    """``parsed_pred`` of ``mmmu_process_results`` for each item (module doc), in the items' order."""
    rng = random.Random(seed)
    out = []
    for it in items:
        if it["question_type"] == "multiple-choice":
            out.append(mparse.parse_multi_choice(it["response"], it["all_choices"], it["index2ans"], rng).pred)
        else:
            parsed = mparse.parse_open(it["response"])
            out.append(str(parsed[0]) if parsed else "")
    return out


def lmms_eval_rule(items: Sequence[dict], seed=0) -> list[bool]:
    return [_lmms_eval_correct(it, [p]) for it, p in zip(items, lmms_eval_preds(items, seed))]


# ------------------------------------------------------------------------------------- writing the formats

def lmms_eval_row(doc_id: int, it: dict, parsed_pred) -> dict:
    """An item as an lmms-eval sample-log row (the fields of ``evaluator.py``; ``doc`` as the HF MMMU row)."""
    options = [it["index2ans"][L] for L in it["all_choices"]]
    doc = {"id": it["id"], "question_type": it["question_type"], "options": str(options), "answer": it["answer"]}
    return {"doc_id": doc_id, "doc": doc, "target": it["answer"], "arguments": [], "resps": [[it["response"]]],
            "filtered_resps": [it["response"]], LMMS_EVAL_METRIC: {"id": it["id"], "subdomain": it["subject"],
                                                                   "question_type": it["question_type"],
                                                                   "answer": it["answer"], "parsed_pred": [parsed_pred]}}


def vlmevalkit_row(index: int, it: dict) -> dict:
    """An item as a VLMEvalKit prediction row (``index``, option columns, ``answer``, ``prediction``, ``id``)."""
    answer = it["answer"] if isinstance(it["answer"], str) else str(it["answer"])
    return {"index": index, "id": it["id"], **{L: it["index2ans"][L] for L in it["all_choices"]},
            "answer": answer, "prediction": it["response"], "category": it["subject"]}


def lmms_eval_rows(items: Sequence[dict]) -> list[dict]:
    """The items as an lmms-eval sample log, ``parsed_pred`` by their rule (:func:`lmms_eval_preds`)."""
    return [lmms_eval_row(i, it, pred) for i, (it, pred) in enumerate(zip(items, lmms_eval_preds(items)))]


def vlmevalkit_rows(items: Sequence[dict]) -> list[dict]:
    return [vlmevalkit_row(i, it) for i, it in enumerate(items)]


def misleading_trace(it: dict) -> str:
    """The item's response behind a thinking trace that names a wrong option (multiple choice) or a wrong number
    (open): a test of trace handling built from real responses."""
    wrong = next((L for L in it["all_choices"] if L != it["answer"]), "A")
    lead = f"My first guess is ({wrong}) {it['index2ans'].get(wrong, '')}." if it["question_type"] == "multiple-choice" \
        else "My first guess is 0."
    return f"<think>{lead} Let me check that again.</think>{it['response']}"


def vlmevalkit_rule(items: Sequence[dict], seed=None) -> list[bool]:
    out = []
    for it in items:
        opt = vlmevalkit_can_infer(it["response"], it["index2ans"]) if it["question_type"] == "multiple-choice" else None
        out.append(opt is not None and opt == str(it["answer"]).strip())
    return out


#: rule set -> (function, label); the first is the official one
RULES: dict[str, tuple[Callable, str]] = {
    "official": (lambda items: _official(items), "official parser (MMMU repository, random.Random(42))"),
    "official, trace removed": (lambda items: _official(items, text=strip_trace),
                                "official parser after removing a thinking trace (NOT official)"),
    "lmms-eval": (lambda items: lmms_eval_rule(items), "lmms-eval mmmu_process_results (fallback random.Random(0))"),
    "vlmevalkit": (lambda items: vlmevalkit_rule(items), "VLMEvalKit exact matching (can_infer, no judge)"),
}
