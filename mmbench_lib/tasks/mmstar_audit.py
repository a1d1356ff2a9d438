"""MMStar items from lmms-eval's and VLMEvalKit's files, and the rule sets a reproduction audit re-scores them with.

The reference rule set is the official one: ``MMStar_eval`` (``eval/vlmeval/evaluate/mmstar.py``,
MMStar-Benchmark/MMStar at 88f243a; ``tasks.letters.mmstar_letter``). lmms-eval's ``exact_match``
(``lmms_eval/tasks/mmstar/utils.py`` at a455120) is the same comparison; its reported number differs in
aggregation: ``mmstar_aggregate_results`` averages the 18 axes (``l2_category``) equally, the official script pools
the questions. :func:`aggregation_notes` states both. VLMEvalKit's rule is ``can_infer`` (no judge).

More: docs/audit.md (MMStar section), docs/mmstar.md.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from mmbench_lib.tasks import mmstar, peer_rules
from mmbench_lib.tasks.letters import mmstar_letter
from mmbench_lib.tasks.letters import vlmevalkit_can_infer
from mmbench_lib.tasks.seed_audit import SeedAudit
from mmbench_lib.tasks.thinking import strip_trace

BENCHMARK = mmstar.BENCHMARK
LMMS_TASKS = ("mmstar",)
VLMEVALKIT_DATASETS = ("MMStar",)
#: the columns a VLMEvalKit MMStar prediction file needs (the last: the item id)
VLMEVALKIT_COLUMNS = ("question", "prediction", "answer", "category", "l2_category", "index")
OFFICIAL_FILES = ("a run folder of this suite (predictions.jsonl, manifest.json); the official MMStar_eval reads "
                  "VLMEvalKit's .xlsx")
#: axis id -> the capability the peers' files carry (``category``); ``audit_inputs.check_benchmark`` checks it
categories = {k: cap for k, (_axis, cap) in mmstar.DIMENSIONS.items()}
LETTERS = tuple(mmstar.LETTERS)
DEMO_FILTERS: dict = {}
DEMO_RUN: dict = {}
DEMO_FILES = {"lmms-eval": "samples_mmstar_demo.jsonl", "vlmevalkit": "demo_MMStar.tsv"}
#: this suite's run folders are read as SEED's are (MMStar's task is a SEED task): ``official_format``, ``read_official``
_RUNS = SeedAudit(BENCHMARK, "mmstar", "average", "MMStar", ("A", "B", "C", "D"), "category", False, categories)


def _options(row: dict) -> dict:
    """Letter -> option text: the ``A``-``D`` columns when the file has them, else parsed from the question
    (``mmstar.split_options``); {} when neither (the official rule needs no options)."""
    cols = {L: str(row[L]) for L in LETTERS if peer_rules.present(row.get(L)) and str(row[L]) != "nan"}
    if cols:
        return cols
    try:
        return dict(zip(LETTERS, mmstar.split_options(str(row.get("question") or ""))[1]))
    except ValueError:
        return {}


def _item(qid, row: dict, response, **extra) -> dict:
    index2ans = _options(row)
    ident = str(int(qid)) if isinstance(qid, float) and qid.is_integer() else str(qid)
    return {"id": ident, "question_type": "multiple-choice", "index2ans": index2ans,
            "letters": list(index2ans) or list(LETTERS), "answer": str(row.get("answer") or "").strip(),
            "response": response if isinstance(response, str) else "", "category": str(row.get("category") or ""),
            "l2_category": str(row.get("l2_category") or ""), "question": str(row.get("question") or ""), **extra}


# ------------------------------------------------------------------------------------------------- rules

def official_hit(response, answer) -> bool:
    """``MMStar_eval``'s comparison: the gold letter equals :func:`mmstar_letter`'s letter (empty: wrong).

    >>> official_hit("(B) a dog", "B"), official_hit("The answer is C.", "C"), official_hit("I think B", "B")
    (True, True, False)
    """
    return mmstar_letter(response).letter == str(answer).strip().upper()


def lmms_eval_hit(response, answer) -> bool:
    """lmms-eval ``exact_match`` (``lmms_eval/tasks/mmstar/utils.py`` at a455120): both lower-cased, stripped,
    newlines as spaces; the gold equals the first character, or the one after ``(``, ``option `` or
    ``the answer is ``; an index past the end is wrong."""
    answer = str(answer).lower().strip().replace("\n", " ")
    p = str(response or "").lower().strip().replace("\n", " ")
    for prefix in ("", "(", "option ", "the answer is "):
        if p.startswith(prefix) and len(p) > len(prefix) and answer == p[len(prefix)]:
            return True
    return False


def _official(items, text=lambda r: r) -> list[bool]:
    return [official_hit(text(it["response"]), it["answer"]) for it in items]


def _lmms_eval(items) -> list[bool]:
    return [lmms_eval_hit(it["response"], it["answer"]) for it in items]


def _vlmevalkit(items) -> list[bool]:
    return [vlmevalkit_can_infer(it["response"], it["index2ans"] or {L: "" for L in LETTERS}) == it["answer"]
            for it in items]


RULES = {
    "official": (_official, "MMStar_eval (MMStar-Benchmark/MMStar 88f243a): first character, or after '(', "
                            "'option ', 'the answer is '"),
    "official, trace removed": (lambda items: _official(items, strip_trace),
                                "the official rule after removing a thinking trace (NOT official)"),
    "lmms-eval": (_lmms_eval, "lmms-eval mmstar exact_match (a455120): the official comparison"),
    "vlmevalkit": (_vlmevalkit, "VLMEvalKit exact matching (can_infer, no judge) over the options"),
}


# ---------------------------------------------------------------------------------------------- readers

def from_lmms_eval(row: dict) -> dict:
    """One ``samples_mmstar_*.jsonl`` row: ``doc`` (``index``, ``question``, ``answer``, ``category``,
    ``l2_category``), the raw ``resps``; the stored ``average.score`` is the "file's own" verdict."""
    doc = row["doc"]
    if not isinstance(doc, dict) or "index" not in doc or "l2_category" not in doc:
        raise ValueError("its doc has no index / l2_category: not a sample log of lmms-eval's mmstar")
    raw = peer_rules.first_text(row.get("resps"))
    it = _item(doc["index"], doc, raw if raw is not None else peer_rules.first_text(row.get("filtered_resps")),
               doc_id=row.get("doc_id"))
    stored = row.get("average")
    if isinstance(stored, dict) and "score" in stored:
        it["own_correct"] = bool(stored["score"])
    return it


def from_vlmevalkit(row: dict) -> dict:
    """One row of a VLMEvalKit MMStar prediction file (``<model>_MMStar.xlsx``, the format ``MMStar_eval`` reads)."""
    prediction = row.get("prediction") if peer_rules.present(row.get("prediction")) else ""
    return _item(row["index"], row, str(prediction), bench=row.get("bench"))


def official_format(path) -> bool:
    """A run folder of this suite for MMStar (a run of another benchmark is a DataError naming it)."""
    return Path(path).is_dir() and _RUNS.official_format(path)


def read_official(path) -> list[dict]:
    """A run folder's ``predictions.jsonl`` (``SeedAudit.read_official``): a ranking run's letter is its response,
    a generated run keeps its raw ``response`` and stored verdict (``own_correct``); the axis from the dimension id."""
    items = _RUNS.read_official(path)
    for it in items:
        axis, cap = mmstar.DIMENSIONS.get(it.get("dimension_id"), ("", ""))
        it.update(l2_category=axis, category=cap)
    return items


def from_task_item(item) -> dict:
    """A question of the task's data copy (``Task.load_items``) as a gold item."""
    return {"id": str(item.id), "question_type": "multiple-choice", "index2ans": dict(zip(item.letters, item.choices)),
            "letters": list(item.letters), "answer": item.answer, "response": "", "category": item.group,
            "l2_category": item.dimension, "question": item.meta.get("source_question") or item.question}


def with_gold(row: dict, gold: dict) -> dict:
    """A plain ``{id, response}`` row with the question fields of its gold item (its verdicts dropped)."""
    base = {k: v for k, v in gold.items() if k != "own_correct"}
    return {**base, "response": row["response"] if isinstance(row.get("response"), str) else "",
            **{k: v for k, v in row.items() if k not in ("id", "response")}}


# ------------------------------------------------------------------------------------------ the aggregation

def axis_mean(items: Sequence[dict], hits: Sequence[bool]) -> float:
    """lmms-eval's reported number (``mmstar_aggregate_results``): the mean over axes (``l2_category``) of each
    axis' accuracy, in %."""
    by_axis: dict[str, list[bool]] = {}
    for it, h in zip(items, hits):
        by_axis.setdefault(it.get("l2_category") or "", []).append(bool(h))
    return 100 * sum(sum(v) / len(v) for v in by_axis.values()) / len(by_axis) if by_axis else 0.0


def aggregation_notes(path, items: Sequence[dict], scores) -> list[str]:
    """The reported-number step: lmms-eval's axis mean of its verdicts beside the official pooled score (one
    note); nothing for an empty file."""
    if not len(items):
        return []
    hits = list(scores["lmms-eval"])
    pooled = 100 * sum(hits) / len(hits)
    macro = axis_mean(items, hits)
    axes = len({it.get("l2_category") for it in items})
    return [f"{Path(str(path)).name}: lmms-eval reports the mean of the {axes} axes' accuracies, {macro:.2f}%; the "
            f"official MMStar_eval pools the questions, {pooled:.2f}% with the same verdicts "
            f"({macro - pooled:+.2f} points from aggregation alone)"]


# ------------------------------------------------------------------------------ writing the peers' formats

def lmms_eval_rows(items: Sequence[dict]) -> list[dict]:
    """The items as an lmms-eval ``mmstar`` sample log (``mmstar_process_results``' metric fields)."""
    out = []
    for n, it in enumerate(items):
        score = float(lmms_eval_hit(it["response"], it["answer"]))
        doc = {"index": int(it["id"]) if str(it["id"]).isdigit() else it["id"], "question": it.get("question", ""),
               "answer": it["answer"], "category": it.get("category", ""), "l2_category": it.get("l2_category", "")}
        verdict = {"question_id": doc["index"], "l2_category": doc["l2_category"], "score": score}
        out.append({"doc_id": n, "doc": doc, "target": it["answer"], "arguments": [], "resps": [[it["response"]]],
                    "filtered_resps": [it["response"]], doc["category"]: verdict, "average": dict(verdict)})
    return out


def vlmevalkit_rows(items: Sequence[dict]) -> list[dict]:
    """The items as a VLMEvalKit MMStar prediction file (``mmstar.XLSX_COLUMNS``)."""
    return [{"index": it["id"], "question": it.get("question", ""), "answer": it["answer"],
             "category": it.get("category", ""), "l2_category": it.get("l2_category", ""), "bench": "",
             "prediction": it["response"]} for it in items]


def misleading_trace(it: dict) -> str:
    """The response behind a thinking trace that names a wrong option first."""
    wrong = next((L for L in it["letters"] if L != it["answer"]), "A")
    return f"<think>({wrong}) looks likely; let me check.</think>{it['response']}"
