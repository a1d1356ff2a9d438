"""MMBench (task ``mmb``) questions from VLMEvalKit's and lmms-eval's files, and the rule sets a reproduction audit
re-scores them with. One audit item is one question: its circular passes (the file's rows grouped by
``index % 1e6``, or ``g_index``) in ``passes``.

The reference rule set is the official one, VLMEvalKit's CircularEval in exact-matching mode
(``vlmeval/dataset/utils/multiple_choice.py::mcq_circular_eval``, open-compass/VLMEvalKit e8e78f05, the code the
MMBench README names): ``can_infer`` per pass (the version of the file's date, ``tasks/peer_rules.py``), a question
right only if every pass is right. Without a judge an unmatched pass is wrong (VLMEvalKit's exact matching gives it
``Z``); :func:`aggregation_notes` counts the questions that decided. lmms-eval (``mmbench_en_dev``,
``lmms_eval/tasks/mmbench/mmbench_evals.py`` at 7030c05) groups the same way with its own copy of ``can_infer``.

More: docs/audit.md (MMBench section), docs/mmbench.md.
"""
from __future__ import annotations

import string
from pathlib import Path
from typing import Sequence

from mmbench_lib.tasks import mmbench, peer_rules
from mmbench_lib.tasks.letters import vlmevalkit_can_infer
from mmbench_lib.tasks.thinking import strip_trace

BENCHMARK = mmbench.BENCHMARK
LMMS_TASKS = ("mmbench_en_dev", "mmbench_cn_dev", "mmbench_en_dev_lite", "mmbench_cn_dev_lite")
VLMEVALKIT_DATASETS = ("MMBench_DEV_EN", "MMBench_DEV_CN", "MMBench_DEV_EN_V11", "MMBench_DEV_CN_V11", "MMBench")
#: the columns a VLMEvalKit MMBench prediction file needs (the last: the row id)
VLMEVALKIT_COLUMNS = ("A", "B", "prediction", "answer", "index")
#: a VLMEvalKit MMBench file's own number is the official CircularEval (the official code is VLMEvalKit's)
OWN_RULES = {"vlmevalkit": "official"}
OFFICIAL_FILES = "no official output but VLMEvalKit's <model>_MMBench_DEV_EN.xlsx (and siblings)"
#: category id -> the leaf category the files carry (``audit_inputs.check_benchmark`` checks lmms-eval's)
categories = {k: leaf for k, (leaf, _l2) in mmbench.DIMENSIONS.items()}
LETTERS = tuple(mmbench.OPTION_LETTERS)
DEMO_FILTERS: dict = {}
DEMO_RUN: dict = {}
DEMO_FILES = {"lmms-eval": "samples_mmbench_en_dev_demo.jsonl", "vlmevalkit": "demo_MMBench_DEV_EN.tsv"}


def _int(v) -> int | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return int(f) if f == f and f.is_integer() else None


def _pass(row: dict, response) -> dict:
    """One circular pass of a row: its index, options (the given letters, ``build_choices``), gold and response."""
    index2ans = {L: str(row[L]) for L in LETTERS if peer_rules.present(row.get(L)) and str(row[L]) != "nan"}
    return {"index": _int(row.get("index")), "index2ans": index2ans, "answer": str(row.get("answer") or "").strip(),
            "response": response if isinstance(response, str) else ""}


def _row_item(row: dict, response, **extra) -> dict:
    index = _int(row.get("index"))
    if index is None:
        raise ValueError(f"index {row.get('index')!r} is not a whole number")
    group = _int(row.get("g_index")) if peer_rules.present(row.get("g_index")) else index % mmbench.OFFSET
    p = _pass(row, response)
    return {"id": str(group), "question_type": "multiple-choice", "index2ans": p["index2ans"],
            "letters": list(p["index2ans"]) or list(LETTERS), "answer": p["answer"], "response": p["response"],
            "category": str(row.get("category") or ""), "question": str(row.get("question") or ""),
            "_pass": p, **extra}


# ---------------------------------------------------------------------------------------------- readers

def from_vlmevalkit(row: dict) -> dict:
    """One row (one circular pass) of ``<model>_MMBench_DEV_EN.xlsx`` / ``.tsv``: ``index``, ``A``-``D``,
    ``answer``, ``prediction``, ``category``; grouped into questions by :func:`annotate`."""
    prediction = row.get("prediction") if peer_rules.present(row.get("prediction")) else ""
    return _row_item(row, str(prediction))


def from_lmms_eval(row: dict) -> dict:
    """One ``samples_mmbench_en_dev_*.jsonl`` row: ``doc`` (the ``lmms-lab/MMBench`` row: ``index``, ``question``,
    ``hint``, ``A``-``D``, ``answer``, ``category``, ``L2-category``) and the raw ``resps`` (lmms-eval strips it
    in ``mmbench_process_results``; ``can_infer`` splits on whitespace, so that changes nothing)."""
    doc = row["doc"]
    if not isinstance(doc, dict) or "index" not in doc or "answer" not in doc:
        raise ValueError("its doc has no index / answer: not a sample log of lmms-eval's mmbench")
    raw = peer_rules.first_text(row.get("resps"))
    return _row_item(doc, raw if raw is not None else peer_rules.first_text(row.get("filtered_resps")),
                     doc_id=row.get("doc_id"))


def from_task_item(item) -> dict:
    """A question of the task's data copy (``Task.load_items``) as a gold item (its main row's options)."""
    index2ans = dict(zip(item.letters, item.choices))
    return {"id": str(item.id), "question_type": "multiple-choice", "index2ans": index2ans,
            "letters": list(item.letters), "answer": item.answer, "response": "", "category": item.dimension,
            "question": item.question}


def with_gold(row: dict, gold: dict) -> dict:
    """A plain ``{id, response}`` row (the question id, one pass) with its gold question's main-row fields."""
    base = {k: v for k, v in gold.items() if k not in ("passes", "_pass")}
    return {**base, "response": row["response"] if isinstance(row.get("response"), str) else "",
            **{k: v for k, v in row.items() if k not in ("id", "response")}}


def annotate(path, fmt: str, items: list[dict]) -> list[dict]:
    """The file's rows as questions: the rows of one group (``index % 1e6``) become one item whose fields are the
    main row's (``index == group``, else the first) and whose ``passes`` are every row's, in index order. A row
    read otherwise (a plain JSONL, a gold copy) is one pass."""
    groups: dict[str, list[dict]] = {}
    for it in items:
        groups.setdefault(it["id"], []).append(it)
    out = []
    for qid, rows in groups.items():
        if "_pass" not in rows[0]:
            out += [{**it, "passes": [{k: it[k] for k in ("index2ans", "answer", "response")}]} for it in rows]
            continue
        main = next((r for r in rows if r["_pass"]["index"] == int(qid)), rows[0])
        by_index: dict[int, dict] = {}
        for r in rows:  # a repeated row index keeps its first row, counted in the notes (aggregation_notes)
            by_index.setdefault(r["_pass"]["index"], r["_pass"])
        item = {k: v for k, v in main.items() if k != "_pass"}
        out.append({**item, "passes": [by_index[i] for i in sorted(by_index)], "repeated_passes": len(rows) - len(by_index)})
    return out


# ------------------------------------------------------------------------------------------------- rules

def _circular(items, infer, text=lambda r: r, main_only=False) -> list[bool]:
    out = []
    for it in items:
        passes = it["passes"][:1] if main_only else it["passes"]
        out.append(all(infer(text(p["response"]), p["index2ans"] or {L: "" for L in LETTERS}) == p["answer"]
                       for p in passes))
    return out


def _vlm(response, choices):
    return vlmevalkit_can_infer(response, choices)


def lmms_eval_infer(answer: str, choices: dict) -> str | None:
    """lmms-eval ``MMBench_Evaluator.can_infer`` (``mmbench_evals.py`` at 7030c05): ``can_infer_option`` over A-E
    (one letter token, given up when "A" is among more than three tokens; then the forms ``X.``, ``X,``, ``X:``,
    ``X)``, ``X).``, ``(X)``, ``(X).``, ``:X``, ``:X,``, ``:X.``, ``:X)``, ``:X).``), then ``can_infer_text``
    (exactly one option text in the lower-cased answer); None when neither.

    >>> lmms_eval_infer("B", {"A": "cat", "B": "dog"}), lmms_eval_infer("A big dog runs here", {"A": "cat", "B": "dog"})
    ('B', 'B')
    """
    answer = str(answer)
    letters = string.ascii_uppercase[:5]
    if "Failed to obtain answer via API" not in answer:
        splits = [x.strip() for x in answer.split()]
        if sum(c in splits for c in letters) == 1:
            if not ("A" in splits and len(splits) > 3):
                return next(c for c in letters if c in splits)
        for pre, suf in (("", "."), ("", ","), ("", ":"), ("", ")"), ("", ")."), ("(", ")"), ("(", ")."), (":", ""),
                         (":", ","), (":", "."), (":", ")"), (":", ").")):
            found = [c for c in letters if pre + c + suf in splits]
            if len(found) == 1:
                return found[0]
    low = answer.lower()
    cands = [k for k, v in choices.items() if str(v).lower() in low]
    return cands[0] if len(cands) == 1 else None


RULES = {
    "official": (lambda items: _circular(items, _vlm),
                 "VLMEvalKit CircularEval, exact matching: can_infer per pass, right only if every pass is right; "
                 "an unmatched pass is wrong (no judge)"),
    "official, trace removed": (lambda items: _circular(items, _vlm, strip_trace),
                                "the official rule after removing a thinking trace (NOT official)"),
    "one pass (main row)": (lambda items: _circular(items, _vlm, main_only=True),
                            "can_infer on the question's main row only: plain accuracy, NOT the official CircularEval"),
    "lmms-eval": (lambda items: _circular(items, lmms_eval_infer),
                  "lmms-eval MMBench_Evaluator (7030c05): its can_infer per pass, circular; its GPT judge not run"),
}


# ------------------------------------------------------------------------------------------ what decided

def undecided(items: Sequence[dict]) -> list[str]:
    """The questions the official rule leaves to the judge: no pass wrong, at least one unmatched."""
    out = []
    for it in items:
        got = [_vlm(p["response"], p["index2ans"] or {L: "" for L in LETTERS}) for p in it["passes"]]
        if any(g is None for g in got) and all(g is None or g == p["answer"] for g, p in zip(got, it["passes"])):
            out.append(it["id"])
    return out


def aggregation_notes(path, items: Sequence[dict], scores) -> list[str]:
    """How many questions the missing judge decided (counted wrong), how many passes the file held, and the
    repeated rows counted once."""
    name, left = Path(str(path)).name, undecided(items)
    passes = sum(len(it.get("passes", ())) for it in items)
    repeated = sum(it.get("repeated_passes", 0) for it in items)
    out = [f"{name}: {repeated} repeated rows (the same index) counted once (the first kept)"] if repeated else []
    return out + [f"{name}: {len(items)} questions in {passes} circular passes; {len(left)} questions have no wrong "
                  f"pass but an answer can_infer matched to no option: without a judge they count wrong (the official "
                  f"pipeline asks an LLM; at most +{100 * len(left) / max(len(items), 1):.2f} points)"
                  + (f": {left[:5]}" if left else "")]


# ------------------------------------------------------------------------------ writing the peers' formats

def _rows_of(items: Sequence[dict]) -> list[dict]:
    rows = []
    for it in items:
        for k, p in enumerate(it["passes"]):
            index = p.get("index") if p.get("index") is not None else int(it["id"]) + k * mmbench.OFFSET
            rows.append({"index": index, "question": it.get("question", ""), **{L: p["index2ans"].get(L) for L in LETTERS},
                         "answer": p["answer"], "category": it.get("category", ""), "prediction": p["response"]})
    return rows


def vlmevalkit_rows(items: Sequence[dict]) -> list[dict]:
    """The questions as a VLMEvalKit prediction file: one row per circular pass."""
    return _rows_of(items)


def lmms_eval_rows(items: Sequence[dict]) -> list[dict]:
    """The questions as an lmms-eval ``mmbench_en_dev`` sample log: one row per pass (``doc`` without its image)."""
    out = []
    for n, r in enumerate(_rows_of(items)):
        doc = {k: v for k, v in r.items() if k != "prediction"}
        out.append({"doc_id": n, "doc": doc, "target": r["answer"], "arguments": [], "resps": [[r["prediction"]]],
                    "filtered_resps": [r["prediction"]],
                    "submission": {**doc, "prediction": r["prediction"].strip()}})
    return out


def misleading_trace(it: dict) -> str:
    """The main response behind a thinking trace that names a wrong option first."""
    wrong = next((L for L in it["letters"] if L != it["answer"]), "A")
    return f"<think>({wrong}) looks likely; let me check.</think>{it['response']}"
