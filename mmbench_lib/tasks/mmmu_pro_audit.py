"""MMMU-Pro items from other harnesses' files, and the rule sets a reproduction audit re-scores them with.

Reads the official ``<model>_<setting>_<method>.jsonl`` outputs (and this suite's run folders), lmms-eval
``mmmu_pro_*`` sample logs and VLMEvalKit ``MMMU_Pro_10c`` / ``MMMU_Pro_V`` (``_COT``) prediction files.
Rule sets: ``official`` (per item what ``mmmu_pro.score_responses`` gives), the same with a thinking trace
removed, lmms-eval's, and VLMEvalKit's exact matching with and without its CoT post-processing (after and,
historically, before its PR#1591). More: docs/modules.md, docs/audit.md.
"""
from __future__ import annotations

import random
import re
import string
from pathlib import Path
from typing import Callable, Sequence

from mmbench_lib.core.items import DataError
from mmbench_lib.core.jsonl import first_row
from mmbench_lib.tasks import mmmu_pro as mp
from mmbench_lib.tasks import mmmu_pro_parser as parser
from mmbench_lib.tasks.letters import vlmevalkit_can_infer
from mmbench_lib.tasks.peer_rules import first_text as _first_text, present as _present
from mmbench_lib.tasks.thinking import strip_trace

BENCHMARK = mp.BENCHMARK
OFFICIAL_FILES = ("an official MMMU-Pro output <model>_<setting>_<method>.jsonl (id, options, answer, response) "
                  "or a run folder of this suite (official/*.jsonl)")
#: VLMEvalKit columns needed, the item-id column last (``id`` is used when the file has it)
VLMEVALKIT_COLUMNS = ("prediction", "answer", "index")
#: the audit demo (``mmbench_lib/demo/audit.py``)
DEMO_FILTERS = {"split": "standard10-direct"}
DEMO_RUN: dict = {}
DEMO_FILES = {"lmms-eval": "samples_mmmu_pro_standard_demo.jsonl", "vlmevalkit": "demo_MMMU_Pro_10c.tsv"}
#: lmms-eval's metric field of its mmmu_pro tasks (``mmmu_pro_process_results``)
LMMS_EVAL_METRIC = "mmmu_acc"
#: the names a peer file of MMMU-Pro carries: lmms-eval tasks, VLMEvalKit datasets (``pipeline/audit_inputs.py``)
LMMS_TASKS = ("mmmu_pro",)
VLMEVALKIT_DATASETS = ("MMMU_Pro_10c", "MMMU_Pro_10c_COT", "MMMU_Pro_V", "MMMU_Pro_V_COT")
LETTERS = string.ascii_uppercase[:10]
#: the letters a gold answer may name (``audit_inputs.check_gold``): A-J, whatever an item's options string parses to
ANSWER_LETTERS = tuple(LETTERS)


def _item(rec: dict, response, setting=None, method=None, **extra) -> dict:
    """An item of one row holding ``id``, ``options`` (list or its Python-list string), ``answer``."""
    options = rec["options"]
    index2ans, letters = parser.mc_info(str(options) if not isinstance(options, list) else options)
    return {"id": str(rec["id"]), "subject": mp._subject(rec), "question_type": "multiple-choice",
            "options": options, "all_choices": letters, "index2ans": index2ans, "answer": rec["answer"],
            "question": rec.get("question") if isinstance(rec.get("question"), str) else None,
            "response": response if isinstance(response, str) else "", "setting": setting, "method": method, **extra}


# ------------------------------------------------------------------------------------------- official files

def _official_name(p: Path) -> bool:
    try:
        mp.parse_filename(p.name)
        return True
    except ValueError:
        return False


def _official_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in [*path.glob("*.jsonl"), *(path / "official").glob("*.jsonl")] if _official_name(p))


def official_format(path) -> bool:
    """An official output file (its name, or a first row with ``id``, ``options``, ``answer`` and no
    ``doc_id``), or a folder holding one (``official/`` of this suite's runs)."""
    path = Path(path)
    if path.is_dir():
        return bool(_official_files(path))
    if path.suffix != ".jsonl":
        return False
    if _official_name(path):
        return True
    row = first_row(path)  # core.jsonl: the first non-blank line, None when unreadable
    return isinstance(row, dict) and {"id", "options", "answer"} <= set(row) and "doc_id" not in row


def read_official(path) -> list[dict]:
    """The items of one official output file (``mmmu_pro.read_output``: its checks, one-line errors); setting
    and method from the name. A file evaluate.py has run over carries ``pred_indexs``: ``own_correct``."""
    path = Path(path)
    files = _official_files(path)
    if len(files) != 1:
        raise DataError(str(path), f"holds {len(files)} official output files ({', '.join(p.name for p in files[:4])}); "
                                   "give one file (one setting and method)")
    try:
        _model, setting, method = mp.parse_filename(files[0].name)
    except ValueError:
        setting, method = None, None
    items = []
    for n, rec in enumerate(mp.read_output(files[0]), 1):
        try:
            it = _item(rec, rec.get("response"), setting, method)
        except (ValueError, SyntaxError) as e:
            raise DataError(f"{files[0]}:{n}", f"options not a Python list ({e})", rec.get("id"), "options") from None
        if "pred_indexs" in rec:
            it["own_correct"] = parser.is_correct(rec["pred_indexs"], rec["answer"])
        items.append(it)
    return items


# -------------------------------------------------------------------------------------------- peers' rows

def from_lmms_eval(row: dict) -> dict:
    """One lmms-eval ``mmmu_pro_*`` sample-log row: ``doc`` (no ``question``: the vision setting), the raw
    response (``resps``), the method from the prompt in ``arguments``, ``own_correct`` from ``mmmu_acc``."""
    doc = row["doc"]
    raw = _first_text(row.get("resps"))
    response = raw if raw is not None else _first_text(row.get("filtered_resps"))
    prompt = next((a for a in row.get("arguments") or [] if isinstance(a, str)), "")
    method = ("cot" if "step by step" in prompt.lower() else "direct") if prompt else None
    it = _item(doc, response, None if "question" in doc else "vision", method, doc_id=row.get("doc_id"),
               filtered=_first_text(row.get("filtered_resps")))
    metric = row.get(LMMS_EVAL_METRIC)
    if isinstance(metric, dict) and "parsed_pred" in metric:
        pred = metric["parsed_pred"]  # evaluate_mmmu: string equality with the answer
        it["own_correct"] = isinstance(pred, str) and pred == it["answer"]
    return it


def from_vlmevalkit(row: dict) -> dict:
    """One VLMEvalKit prediction row: options from the letter columns (``build_choices``; else an ``options``
    list string), ``id`` (else ``index``) as the item id;
    ``question`` "placeholder" is ``MMMU_Pro_V`` (``MMMUProDataset.__init__``); ``hit`` (a result file) is
    ``own_correct``."""
    options = [str(row[L]) for L in LETTERS if _present(row.get(L))]
    if not options and _present(row.get("options")):  # not VLMEvalKit's layout (letter columns): a list string
        options = row["options"]
    item_id = row["id"] if _present(row.get("id")) else row["index"]
    prediction = row.get("prediction") if _present(row.get("prediction")) else ""
    rec = {"id": item_id, "options": options, "answer": str(row.get("answer")), "question": row.get("question")}
    it = _item(rec, str(prediction), "vision" if row.get("question") == "placeholder" else None, None,
               index=row.get("index"))
    if _present(row.get("hit")):
        it["own_correct"] = bool(int(row["hit"]))
    return it


def from_task_item(item) -> dict:
    """A question of the task's own data copy (``Task.load_items``: any layout the task declares) as a gold item."""
    rec = {"id": item.id, "options": list(item.choices), "answer": item.answer, "question": item.question,
           "subject": item.dimension}
    return _item(rec, "", split=item.split)


def with_gold(row: dict, gold: dict) -> dict:
    """A plain ``{id, response}`` row with the question fields of its gold item (not the gold's verdict)."""
    return {**{k: v for k, v in gold.items() if k != "own_correct"},
            "response": row["response"] if isinstance(row.get("response"), str) else "",
            **{k: v for k, v in row.items() if k not in ("id", "response")}}


_LMMS_TASK = re.compile(r"samples_mmmu_pro_(?P<setting>standard|vision|original)(?P<cot>_cot)?_", re.I)
_VLM_DATASET = re.compile(r"MMMU_Pro_(?P<setting>10c|V)(?P<cot>_COT)?(?:_|\.|$)")


def annotate(path, fmt: str, items: list[dict]) -> list[dict]:
    """Setting and method from the file's name where the rows do not tell: lmms-eval
    ``samples_mmmu_pro_<standard|vision>[_cot]_*.jsonl``, VLMEvalKit ``<model>_MMMU_Pro_<10c|V>[_COT].<ext>``."""
    name = Path(path).name
    m = _LMMS_TASK.search(name) if fmt == "lmms-eval" else _VLM_DATASET.search(name) if fmt == "vlmevalkit" else None
    if not m:
        return items
    setting = "vision" if m["setting"] in ("vision", "V") else "standard10"
    method = "cot" if m["cot"] else "direct"
    for it in items:
        it["setting"] = it.get("setting") or setting
        it["method"] = it.get("method") or method
    return items


# ------------------------------------------------------------------------------------------------ rules

def _records(items: Sequence[dict], text=lambda r: r) -> list[dict]:
    return [{"id": it["id"], "options": it["options"], "answer": it["answer"], "subject": it["subject"],
             "response": text(it["response"])} for it in items]


def official_rule(items: Sequence[dict], seed=42, text=lambda r: r) -> list[bool]:
    """``mmmu_pro.score_records`` (evaluate.py's extraction, one ``random.Random(seed)`` in the file's order):
    per item what ``score_responses`` gives for the same file."""
    return [r["correct"] for r in mp.score_records(_records(items, text), random.Random(seed))]


def lmms_eval_preds(items: Sequence[dict], seed=0) -> list:
    """``parsed_pred`` of lmms-eval's ``mmmu_pro_process_results``: a doc with ``question`` goes through
    ``parse_mmmu_multi_choice_response`` (evaluate.py without its ``Answer:`` rule; fallback from the global
    ``random``, here ``random.Random(seed)`` in the items' order); a vision doc keeps the whole response."""
    rng = random.Random(seed)
    return [it["response"] if it.get("setting") == "vision"
            else parser.parse_answer(it["response"], it["all_choices"], it["index2ans"], rng, answer_rule=False).pred
            for it in items]


def lmms_eval_rule(items: Sequence[dict], seed=0) -> list[bool]:
    return [isinstance(p, str) and p == it["answer"] for it, p in zip(items, lmms_eval_preds(items, seed))]


def cot_postproc(response: str, before_1591: bool = False) -> str:
    """VLMEvalKit ``MMMUProDataset.cot_postproc`` (``vlmeval/dataset/image_mcq.py``): the lines starting with
    ``Answer:``; after PR#1591 (944ee120) the capitals after the last such line's marker, one distinct -> that
    letter, else that text. Before (87f2dbe5, ``before_1591``): only when exactly one such line, and the
    capitals of the whole line, the "A" of "Answer" included; else the line after its 7th character."""
    lines = [x.strip() for x in str(response).strip().split("\n")]
    cands = [x for x in lines if x.startswith("Answer:")]
    if before_1591:
        if len(cands) != 1:
            return response
        tail, counted = cands[0][7:], cands[0]
    else:
        if not cands:
            return response
        tail = counted = cands[-1][len("Answer:"):]
    caps = {ch for ch in counted if ch in string.ascii_uppercase}
    return caps.pop() if len(caps) == 1 else tail


def vlmevalkit_rule(items: Sequence[dict], cot: str | None = None) -> list[bool]:
    """VLMEvalKit exact matching (``mcq_vanilla_eval`` without a judge): ``can_infer`` over the letter columns,
    against the answer (``MMMU`` datasets: a non-letter answer counts as "A"). ``cot``: ``"after"`` or
    ``"before"`` PR#1591's ``cot_postproc`` first (the ``_COT`` datasets)."""
    out = []
    for it in items:
        pred = str(it["response"])
        if cot:
            pred = cot_postproc(pred, before_1591=cot == "before")
        gt = it["answer"] if it["answer"] in list(string.ascii_uppercase) else "A"
        out.append(vlmevalkit_can_infer(pred, it["index2ans"]) == gt)
    return out


#: rule set -> (function, label); the first is the official one
RULES: dict[str, tuple[Callable, str]] = {
    "official": (lambda items: official_rule(items), "official extraction (mmmu-pro/evaluate.py, random.Random(42))"),
    "official, trace removed": (lambda items: official_rule(items, text=strip_trace),
                                "official extraction after removing a thinking trace (NOT official)"),
    "lmms-eval": (lambda items: lmms_eval_rule(items), "lmms-eval mmmu_pro_process_results (fallback random.Random(0); "
                                                       "vision: the whole response must equal the letter)"),
    "vlmevalkit": (lambda items: vlmevalkit_rule(items), "VLMEvalKit exact matching (MMMU_Pro_10c / MMMU_Pro_V, no judge)"),
    "vlmevalkit cot": (lambda items: vlmevalkit_rule(items, "after"),
                       "VLMEvalKit _COT datasets: cot_postproc (after PR#1591) then exact matching"),
    "vlmevalkit cot, before PR#1591": (lambda items: vlmevalkit_rule(items, "before"),
                                       "historical: VLMEvalKit _COT cot_postproc before PR#1591 (counted the A of "
                                       "'Answer') then exact matching"),
}


# ------------------------------------------------------------------------------------- writing the formats

def lmms_eval_row(doc_id: int, it: dict, parsed_pred) -> dict:
    """An item as an lmms-eval sample-log row (``evaluator.py`` fields; ``doc`` as the hub row without images:
    the vision config has no ``question``; the prompt in ``arguments``)."""
    options = it["options"] if isinstance(it["options"], str) else str(list(it["options"]))
    vision = it.get("setting") == "vision"
    doc = {"id": it["id"], **({} if vision else {"question": it.get("question") or ""}), "options": options,
           "answer": it["answer"], "subject": it["subject"]}
    method = it.get("method") or "direct"
    prompt = parser.vision_prompt(method) if vision else parser.standard_prompt(
        it.get("question") or "", [it["index2ans"][L] for L in it["all_choices"]], method)
    return {"doc_id": doc_id, "doc": doc, "target": it["answer"], "arguments": [prompt, {"max_new_tokens": 256}],
            "resps": [[it["response"]]], "filtered_resps": [it["response"]],
            LMMS_EVAL_METRIC: {"id": it["id"], "subject": it["subject"], "answer": it["answer"],
                               "parsed_pred": parsed_pred}}


def vlmevalkit_row(index: int, it: dict) -> dict:
    """An item as a VLMEvalKit prediction row (``index``, ``question``, letter columns, ``answer``,
    ``category``, ``prediction``, and the item ``id``)."""
    question = "placeholder" if it.get("setting") == "vision" else (it.get("question") or "")
    return {"index": index, "id": it["id"], "question": question, **{L: it["index2ans"][L] for L in it["all_choices"]},
            "answer": it["answer"], "category": it["subject"], "prediction": it["response"]}


def lmms_eval_rows(items: Sequence[dict]) -> list[dict]:
    """The items as an lmms-eval sample log, ``parsed_pred`` by their rule (:func:`lmms_eval_preds`)."""
    return [lmms_eval_row(i, it, p) for i, (it, p) in enumerate(zip(items, lmms_eval_preds(items)))]


def vlmevalkit_rows(items: Sequence[dict]) -> list[dict]:
    return [vlmevalkit_row(i, it) for i, it in enumerate(items)]


def misleading_trace(it: dict) -> str:
    """The item's response behind a thinking trace that names a wrong option in brackets (the official
    extraction's bracket pass finds it when the response has no ``Answer:`` line)."""
    wrong = next((L for L in it["all_choices"] if L != it["answer"]), "A")
    return (f"<think>My first guess is ({wrong}) {it['index2ans'].get(wrong, '')}. Let me check that again.</think>"
            f"{it['response']}")
