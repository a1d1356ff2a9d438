"""CMMMU items from other harnesses' files, and the rule sets a reproduction audit re-scores them with.

More: docs/modules.md, docs/audit.md, ``mmbench_lib/tasks/cmmmu_audit.py``.
"""
from __future__ import annotations

import random
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Sequence

from mmbench_lib.core.items import DataError
from mmbench_lib.core.jsonl import first_row
from mmbench_lib.tasks import peer_rules
from mmbench_lib.tasks import cmmmu_official as cofficial
from mmbench_lib.tasks import cmmmu_parser as cparse
from mmbench_lib.tasks.thinking import strip_trace

BENCHMARK = "cmmmu"
#: the audit demo (``mmbench_lib/demo/audit.py``): the own run's data filters and settings, the peer files' names
DEMO_FILTERS = {"split": "val"}
DEMO_RUN: dict = {}
DEMO_FILES = {"lmms-eval": "samples_cmmmu_val_demo.jsonl", "vlmevalkit": "demo_CMMMU_VAL.tsv"}
#: lmms-eval's CMMMU metric field (``cmmmu_process_results``)
LMMS_EVAL_METRIC = "cmmmu_acc"
#: the names a peer file of CMMMU carries: lmms-eval tasks, VLMEvalKit datasets (``pipeline/audit_inputs.py``)
LMMS_TASKS = ("cmmmu", "cmmmu_val", "cmmmu_test")
VLMEVALKIT_DATASETS = ("CMMMU_VAL", "CMMMU_TEST")
#: the official files, for the one-line error of a file of no known format
OFFICIAL_FILES = ("a folder of responses.jsonl and gold.jsonl (this suite's official/ files, or a run folder holding "
                  "them), the official scorer's data rows {id, type, answer} (the --gold of its {id, type, response} file)")
#: the columns a VLMEvalKit CMMMU prediction file needs (``CMMMU.evaluate`` reads type, category, answer,
#: prediction); the item id last: ``id`` when the file has it, else ``index``
VLMEVALKIT_COLUMNS = ("prediction", "answer", "type", "category", "index")
#: Chinese answer kind -> the suite's question type (``tasks/cmmmu.py``)
QUESTION_TYPES = {"选择": "multiple-choice", "判断": "true-false", "填空": "fill-in-the-blank"}
LETTERS = cparse.MC_CHOICES
#: a multiple-choice gold may name several letters in one string ("AC"; ``audit_inputs.check_gold``)
MULTI_LETTER_ANSWERS = True


def _text(value) -> str:
    """A response as the official reader takes it: a string as is, a number through ``str``, else empty."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
        return str(value)
    return ""


_present = peer_rules.present


def _category(row: dict) -> str | None:
    """The Chinese category of a row: its ``category`` (Chinese, English or folder name), else its subject's."""
    return cofficial.category_of(row, Path("")) or cparse.SUBJECT_TO_CATEGORY.get(row.get("subcategory"))


def _item(item_id, ctype, answer, response, index2ans=None, category=None, subject_zh=None, **extra) -> dict:
    if ctype not in QUESTION_TYPES:
        raise ValueError(f"unknown type {ctype!r}; expected 选择, 判断 or 填空")
    return {"id": cofficial.key(item_id), "type": ctype, "question_type": QUESTION_TYPES[ctype],
            "category": category, "subject_zh": subject_zh,
            "index2ans": dict(index2ans) if ctype == "选择" and index2ans is not None else None,
            "answer": answer if isinstance(answer, str) else ("" if answer is None else str(answer)),
            "response": _text(response), **extra}


def _gold_item(qid: str, g: dict, response) -> dict:
    return _item(qid, g["type"], g["answer"], response, g.get("index2ans"), g["category"], g.get("subcategory"))


# ------------------------------------------------------------------------------------------ official files

def _suite_folder(path: Path) -> Path | None:
    """The folder of ``responses.jsonl`` + ``gold.jsonl`` (``Task.write_official``): ``path`` or its ``official/``."""
    for d in (path, path / "official"):
        if (d / "responses.jsonl").is_file() and (d / "gold.jsonl").is_file():
            return d
    return None


def _first_row(path: Path):
    files = [path] if path.is_file() and path.suffix == ".jsonl" else \
        sorted(path.rglob("*.jsonl"))[:1] if path.is_dir() else []
    return first_row(files[0], objects=False) if files else None  # core.jsonl; None when unreadable


def official_format(path) -> bool:
    """Whether ``path`` holds official CMMMU files: a folder of ``responses.jsonl`` + ``gold.jsonl`` (or a run
    folder with them under ``official/``), or gold rows ``{id, type, answer}`` without responses (the official
    scorer's data file, a ``cmmmu-data-<split>`` folder): those give the questions of a ``--gold``."""
    path = Path(path)
    if path.is_dir() and _suite_folder(path) is not None:
        return True
    row = _first_row(path)
    return (isinstance(row, dict) and "id" in row and row.get("type") in QUESTION_TYPES and "answer" in row
            and "response" not in row and "doc" not in row)


def read_official(path) -> list[dict]:
    """Items of official files (:func:`official_format`), read by ``tasks/cmmmu_official`` as ``score-responses``
    reads them: response rows joined to the gold rows by ``int(id)``, a repeated id's last row at its first
    place, ids without gold left out. Gold rows alone give items with empty responses."""
    path = Path(path)
    folder = _suite_folder(path) if path.is_dir() else None
    if folder is None:
        return [_gold_item(qid, g, "") for qid, g in cofficial.gold_table(path).items()]
    gold = cofficial.gold_table(folder / "gold.jsonl")
    outputs: "OrderedDict[str, object]" = OrderedDict()
    for f, n, row in cofficial.jsonl_rows(folder / "responses.jsonl"):
        if "response" not in row:
            raise DataError(str(f), f"line {n}: an answer-mode row (no response): nothing for the rule sets to parse",
                            cofficial.key(row["id"]), "response")
        outputs[cofficial.key(row["id"])] = row["response"]
    return [_gold_item(qid, gold[qid], resp) for qid, resp in outputs.items() if qid in gold]


# --------------------------------------------------------------------------------------------- peers' files

_first_text = peer_rules.first_text  # one copy: tasks/peer_rules.py


def _options(row: dict) -> dict[str, str]:
    return {L: str(row[f"option{i}"]) if _present(row.get(f"option{i}")) else "" for i, L in enumerate(LETTERS, 1)}


def from_lmms_eval(row: dict) -> dict:
    """One lmms-eval sample-log row (task ``cmmmu_val``) as an item: the raw response (``resps``), the question
    from ``doc`` (the ``lmms-lab/CMMMU`` row), ``own_correct`` from the row's ``cmmmu_acc.parsed_pred``
    (``lmms_eval/tasks/cmmmu/utils.py`` ``cmmmu_process_results``, lmms-eval 2747f96)."""
    doc = row["doc"]
    raw = _first_text(row.get("resps"))
    response = raw if raw is not None else _first_text(row.get("filtered_resps"))
    it = _item(doc["id"], doc["type"], doc["answer"], response, _options(doc) if doc["type"] == "选择" else None,
               _category(doc), doc.get("subcategory"), doc_id=row.get("doc_id"),
               filtered=_first_text(row.get("filtered_resps")))
    metric = row.get(LMMS_EVAL_METRIC)
    if isinstance(metric, dict) and "parsed_pred" in metric:
        # a tie's draw is made at aggregation from their global stream, not logged: one draw per item (its id)
        it["own_correct"] = _lmms_eval_correct(it, metric["parsed_pred"], random.Random(it["id"]))
    return it


def from_vlmevalkit(row: dict) -> dict:
    """One VLMEvalKit ``CMMMU_VAL`` prediction row as an item (``type``, ``option1``..``option4``, ``answer``,
    ``category``, ``prediction``; the id from ``id``, else ``index``)."""
    item_id = row["id"] if _present(row.get("id")) else row["index"]
    ctype = row.get("type")
    return _item(item_id, ctype, row.get("answer"), row.get("prediction") if _present(row.get("prediction")) else "",
                 _options(row) if ctype == "选择" else None, _category(row), row.get("subcategory"),
                 index=row.get("index"))


def with_gold(row: dict, gold: dict) -> dict:
    """A plain ``{id, response}`` row (the official scorer's ``{id, type, response}`` too) with the question
    fields of its gold item; the gold's type wins, as in ``eval_script.py``."""
    return {**{k: v for k, v in row.items() if k not in gold and k not in ("id", "response")}, **gold,
            "response": _text(row.get("response"))}


# ------------------------------------------------------------------------------------------------ rules

def _mc_options(it: dict) -> dict[str, str]:
    return it["index2ans"] if it["index2ans"] is not None else {L: cofficial.NO_OPTION for L in LETTERS}


def _official(items: Sequence[dict], seed=42, text=lambda r: r) -> list[bool]:
    """The official evaluation (docs/protocols.md §4.4-4.5) over ``text(response)``: one ``random.Random(42)``
    in the official category order, items in file order; items without a category last."""
    by_category: "OrderedDict[str, list[int]]" = OrderedDict()
    uncategorised = []
    for i, it in enumerate(items):
        (by_category.setdefault(it["category"], []) if it["category"] else uncategorised).append(i)
    rng = random.Random(seed)
    out = [False] * len(items)
    for i in [i for _c, i in cparse.official_order(by_category)] + uncategorised:
        it = items[i]
        _parsed, correct = cparse.evaluate_response(it["type"], text(it["response"]), it["answer"],
                                                    _mc_options(it) if it["type"] == "选择" else None, rng)
        out[i] = bool(correct)
    return out


def _vote(keys: Sequence[str], rng: random.Random) -> str:
    """The true/false vote over key responses (official, lmms-eval and VLMEvalKit alike: ambiguity words drop a
    key; positive words are tested first, so 不正确 votes 对); a tie draws from ``rng``."""
    keys = [k for k in keys if not any(a in k for a in cparse.AMBIGUOUS_KEYWORDS)]
    pos = sum(any(w in k for w in cparse.POSITIVE_KEYWORDS) for k in keys)
    neg = sum(not any(w in k for w in cparse.POSITIVE_KEYWORDS) and any(w in k for w in cparse.NEGATIVE_KEYWORDS)
              for k in keys)
    return "对" if pos > neg else "错" if neg > pos else rng.choice(cparse.TF_CHOICES)


def _lmms_eval_correct(it: dict, parsed_pred, rng: random.Random) -> bool:
    """``eval_cmmmu`` of lmms-eval over one stored ``parsed_pred`` (module doc)."""
    if it["type"] == "选择":
        return parsed_pred == it["answer"]
    if it["type"] == "填空":
        return cparse.eval_fill(it["answer"], parsed_pred if isinstance(parsed_pred, list) else [parsed_pred])
    return _vote([str(p) for p in (parsed_pred if isinstance(parsed_pred, list) else [parsed_pred])], rng) == it["answer"]


def _lmms_eval_parse(it: dict, rng: random.Random):
    """``cmmmu_process_results``' ``parsed_pred``: letters (an empty response draws a letter: no empty guard),
    the true/false key responses, or the fill-in predictions."""
    response = it["response"]
    if it["type"] == "选择":
        if response == "":
            return rng.choice(LETTERS)
        return cparse.parse_multi_choice(response, _mc_options(it), rng).pred
    if it["type"] == "判断":
        return cparse.tf_key_responses(response)
    return cparse.parse_fill(response, it["answer"])


def lmms_eval_preds(items: Sequence[dict], seed=0) -> list:
    """``parsed_pred`` of ``cmmmu_process_results`` for each item, in the items' order (one stream)."""
    rng = random.Random(seed)
    return [_lmms_eval_parse(it, rng) for it in items]


def lmms_eval_rule(items: Sequence[dict], seed=0) -> list[bool]:
    """lmms-eval (``lmms_eval/tasks/cmmmu/utils.py`` 2747f96: ``cmmmu_process_results``, then
    ``cmmmu_aggregate_results`` / ``eval_cmmmu``): the multiple-choice draws at ``process_results`` in log order,
    then ``eval_cmmmu`` per subject (``subdomain``, first-seen order), whose true/false ties draw from the same
    stream. Their stream is Python's global ``random`` (seeded 0 by lmms-eval's CLI): ``random.Random(seed)``
    stands for it, an approximation. Parsing and judging are the official code's, but for the empty guard."""
    rng = random.Random(seed)
    preds = [_lmms_eval_parse(it, rng) for it in items]
    groups: "OrderedDict[object, list[int]]" = OrderedDict()
    for i, it in enumerate(items):
        groups.setdefault(it["subject_zh"], []).append(i)
    out = [False] * len(items)
    for idx in groups.values():
        for i in idx:
            out[i] = _lmms_eval_correct(items[i], preds[i], rng)
    return out


def _vlmevalkit_text(it: dict) -> str:
    return it["response"] if it["response"] != "" else "nan"  # an empty cell is NaN; CMMMU.evaluate takes str()


def _vlmevalkit_matches(items: Sequence[dict], seed=0) -> list[int]:
    """Per item, what ``CMMMU.evaluate`` adds to its correct count: 0 or 1, and for a fill-in item one per
    matching prediction (its loop has no break)."""
    rng = random.Random(seed)
    out = []
    for it in items:
        text = _vlmevalkit_text(it)
        if it["type"] == "选择":
            out.append(int(cparse.parse_multi_choice(text, _mc_options(it), rng).pred == it["answer"]))
        elif it["type"] == "判断":
            out.append(int(_vote(cparse.tf_key_responses(text), rng) == it["answer"]))
        else:
            gold = cparse.normalize_str(it["answer"], it["answer"])
            out.append(sum((isinstance(p, str) and any(isinstance(g, str) and g in p for g in gold))
                           or (not isinstance(p, str) and p in gold) for p in cparse.parse_fill(text, it["answer"])))
    return out


def vlmevalkit_rule(items: Sequence[dict], seed=0) -> list[bool]:
    """VLMEvalKit ``CMMMU.evaluate`` (``vlmeval/dataset/cmmmu.py``, VLMEvalKit 23757c4): a rule, no judge; the
    official parsing copied, without the empty guard (an empty prediction is ``str(NaN)``, "nan"), one global
    ``random`` stream in file order (unseeded there: ``random.Random(seed)`` here)."""
    return [m > 0 for m in _vlmevalkit_matches(items, seed)]


def vlmevalkit_total(items: Sequence[dict], seed=0) -> int:
    """The correct count ``CMMMU.evaluate`` prints (``总准确率`` times n): a fill-in item may count more than once."""
    return sum(_vlmevalkit_matches(items, seed))


# ------------------------------------------------------------------------------------- writing the formats

def lmms_eval_row(doc_id: int, it: dict, parsed_pred) -> dict:
    """An item as an lmms-eval sample-log row (``doc`` as the ``lmms-lab/CMMMU`` row without its images)."""
    opts = it["index2ans"] or {}
    doc = {"id": it["id"], "type": it["type"], "question": it.get("question", ""),
           **{f"option{i}": (opts.get(L, "") if it["type"] == "选择" else None) for i, L in enumerate(LETTERS, 1)},
           "answer": it["answer"], "category": it["category"], "subcategory": it["subject_zh"]}
    return {"doc_id": doc_id, "doc": doc, "target": it["answer"], "arguments": [], "resps": [[it["response"]]],
            "filtered_resps": [it["response"]],
            LMMS_EVAL_METRIC: {"id": it["id"], "subdomain": it["subject_zh"], "question_type": it["type"],
                               "answer": it["answer"], "parsed_pred": parsed_pred}}


def vlmevalkit_row(index: int, it: dict) -> dict:
    """An item as a ``CMMMU_VAL`` prediction row (the dataset's columns less ``image``, plus ``prediction``)."""
    opts = it["index2ans"] or {}
    return {"index": index, "id": it["id"], "type": it["type"],
            **{f"option{i}": opts.get(L, "") for i, L in enumerate(LETTERS, 1)},
            "answer": it["answer"], "category": it["category"], "subcategory": it["subject_zh"],
            "prediction": it["response"]}


def lmms_eval_rows(items: Sequence[dict]) -> list[dict]:
    """The items as an lmms-eval sample log, ``parsed_pred`` by their rule (:func:`lmms_eval_preds`)."""
    return [lmms_eval_row(i, it, p) for i, (it, p) in enumerate(zip(items, lmms_eval_preds(items)))]


def vlmevalkit_rows(items: Sequence[dict]) -> list[dict]:
    return [vlmevalkit_row(i, it) for i, it in enumerate(items)]


def misleading_trace(it: dict) -> str:
    """The item's response behind a thinking trace that names a wrong answer: a wrong option in brackets, two
    votes for the wrong true/false word, or a wrong number after 答案是."""
    if it["type"] == "选择":
        wrong = next(L for L in LETTERS if L != it["answer"])
        lead = f"我先猜答案是({wrong})，再核对一下。"
    elif it["type"] == "判断":
        wrong = "错" if it["answer"] == "对" else "对"
        lead = f"这个说法是{wrong}的。再想想，结果是{wrong}。"
    else:
        lead = f"我先算出答案是{'1' if it['answer'].strip() == '0' else '0'}。再验算一下。"
    return f"<think>{lead}</think>{it['response']}"


#: rule set -> (function, label); the first is the official one
RULES: dict[str, tuple[Callable, str]] = {
    "official": (lambda items: _official(items), "official evaluation (CMMMU eval_utils.py, random.Random(42))"),
    "official, trace removed": (lambda items: _official(items, text=strip_trace),
                                "official evaluation after removing a thinking trace (NOT official)"),
    "lmms-eval": (lambda items: lmms_eval_rule(items), "lmms-eval cmmmu_process_results + eval_cmmmu (random.Random(0))"),
    "vlmevalkit": (lambda items: vlmevalkit_rule(items), "VLMEvalKit CMMMU.evaluate (rule, no judge; random.Random(0))"),
}
