"""MMMU's official scorer (``main_parse_and_eval.py`` + ``main_eval_only.py``, docs/protocols.md §3.4-3.9): the
``subject-folders`` format, ``DIR/<Subject>/output.json`` lists of ``{id, question_type, answer, all_choices, index2ans,
response}``; one ``random.Random(42)`` consumed by the MC fallbacks in the official short-key subject order, within a
subject in file order; per subject / discipline / overall question-weighted accuracies as ``main_eval_only.py`` prints
them. Reached as ``get_task("mmmu").score_official(...)`` (``mmbench score-responses``, the generation runs' scoring,
the reproduction audit's reader of ``output.json``).

More: docs/modules.md (``tasks/mmmu_official.py``).
"""
from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path

from mmbench_lib.core.items import DataError, read_utf8
from mmbench_lib.core.metrics import entry
from mmbench_lib.tasks import mmmu_parser as mparse
from mmbench_lib.tasks.official_common import (fallback_rng, mark_response, response_text, scalar_id, seed_text, tally,
                                               warn_all)


def read_answer_dict(path) -> dict[str, dict]:
    """An MMMU answer file (``answer_dict_val.json`` / ``answer_dict_test.json`` of the MMMU repository,
    docs/protocols.md §3.9): ``{id: {"question_type": "multiple-choice" | "short-answer", "ground_truth": "B" | "1.06" | [..]}}``."""
    path = Path(path)
    try:
        data = json.loads(read_utf8(path))  # a regular file of bounded size (core.items.read_utf8)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise DataError(str(path), f"expected an MMMU answer dict (JSON), found an unreadable file ({type(e).__name__}: {e})") from None
    if not isinstance(data, dict):
        raise DataError(str(path), f"expected {{id: {{question_type, ground_truth}}}}, found a JSON {type(data).__name__}")
    for qid, rec in data.items():
        if not isinstance(rec, dict) or "ground_truth" not in rec:
            raise DataError(str(path), "expected {question_type, ground_truth}", qid, "ground_truth")
        gt = rec["ground_truth"]
        if not (isinstance(gt, str) or (isinstance(gt, list) and gt and all(isinstance(g, str) for g in gt))):
            raise DataError(str(path), f"expected a string or a list of strings, found {gt!r}", qid, "ground_truth")
    return data



def read_output_json(path: Path) -> list[dict]:
    try:
        data = json.loads(read_utf8(path))
    except json.JSONDecodeError as e:
        raise DataError(str(path), f"not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(data, list):
        raise DataError(str(path), f"expected a list of records, got {type(data).__name__}")
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise DataError(str(path), f"record #{i} is not an object")
        for key in ("id", "question_type"):
            if key not in rec:
                raise DataError(str(path), f"record #{i}: field missing", rec.get("id"), key)
        if not scalar_id(rec["id"]):
            raise DataError(str(path), f"record #{i}: an id is a string or an integer, got {type(rec['id']).__name__}",
                            None, "id")
        if rec["question_type"] not in MMMU_QUESTION_TYPES:
            raise DataError(str(path), f"record #{i}: question_type {rec['question_type']!r} is not one of "
                                       f"{list(MMMU_QUESTION_TYPES)}; not scored", rec["id"], "question_type")
        if mparse.normalize_question_type(rec["question_type"]) == "multiple-choice":
            for key in ("all_choices", "index2ans"):
                if not isinstance(rec.get(key), (list, dict) if key == "all_choices" else dict):
                    raise DataError(str(path), f"record #{i}: field missing or of the wrong type", rec["id"], key)
            bad = [k for k, v in rec["index2ans"].items() if not isinstance(v, str)]
            if bad:  # the official parser calls .lower() on each option text
                v = rec["index2ans"][bad[0]]
                raise DataError(str(path), f"record #{i}: option {bad[0]!r} is {type(v).__name__} {v!r}, not an option "
                                           "text (the official parser reads strings)", rec["id"], "index2ans")
            _check_mc_gold(path, i, rec)
        elif not _open_gold_ok(rec.get("answer")):
            raise DataError(str(path), f"record #{i}: an open answer is a string, a number or a list of them, got "
                                       f"{type(rec.get('answer')).__name__}", rec["id"], "answer")
    if not data:
        raise DataError(str(path), "no records (an empty output.json is not scored as 0%)")
    return data


#: MMMU question types (docs/protocols.md §3.1: HF ``multiple-choice`` / ``open``, official ``short-answer``)
MMMU_QUESTION_TYPES = ("multiple-choice", "open", "short-answer")


def _open_gold_ok(answer) -> bool:
    def one(v):
        return isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool))
    return answer is None or one(answer) or (isinstance(answer, list) and bool(answer) and all(map(one, answer)))


def _check_mc_gold(path, i: int, rec: dict) -> None:
    """A multiple-choice gold answer names an option: a letter of ``all_choices`` (or a list of them,
    also as an HF list string); ``None`` (a test split) is unjudged. Anything else is refused."""
    choices, answer = rec["all_choices"], rec.get("answer")
    if not isinstance(choices, list) or not choices or not all(isinstance(c, str) for c in choices):
        raise DataError(str(path), f"record #{i}: all_choices must be a non-empty list of letters", rec["id"], "all_choices")
    if answer is None:
        return
    gold = mparse.parse_gold(answer) if isinstance(answer, str) and answer.lstrip().startswith("[") else answer
    letters = gold if isinstance(gold, list) else [gold]
    if not letters or not all(isinstance(g, str) and g in choices for g in letters):
        raise DataError(str(path), f"record #{i}: gold answer {answer!r} names no option of {choices}; not scored",
                        rec["id"], "answer")


#: MMMU parser variants: the official rules, and the non-official ones a protocol report compares
MMMU_VARIANTS = ("official", "lenient-mc", "fixed-split")


def score_outputs(root, use_random: bool = True, parse_list_gold: bool = True, seed=42,
                       variant: str = "official", answers=None) -> tuple[list[dict], dict]:
    """Official "parse and eval" over ``root/<Subject>/output.json`` (docs/protocols.md §3.4-3.9).

    ``use_random=False`` is the "no-random" mode (unparseable MC scored wrong, docs/protocols.md §3.7).
    ``parse_list_gold`` turns HF list strings ("['24/7', '3.429']") into lists (P-M2); the
    official scorer does not, so such items are counted in ``counts.list_string_golds``.
    ``seed``: the fallback RNG's seed (official 42) or a ``random.Random`` to draw from.
    ``variant`` (NOT official unless ``"official"``): ``"lenient-mc"`` reads multiple choice with
    ``parse_multi_choice_lenient`` (markdown, "C)", lower-case letters; P-M3); ``"fixed-split"`` parses
    open answers with the sentence split before lower-casing (``parse_open(fixed_split=True)``).
    ``answers``: an answer dict (``answer_dict_test.json`` / ``answer_dict_val.json``, docs/protocols.md §3.9) whose
    ``ground_truth`` replaces each record's ``answer`` (the test split's outputs carry none).
    Returns ``(rows, summary)``.
    """
    gold_dict = read_answer_dict(answers) if answers is not None else {}
    if variant not in MMMU_VARIANTS:
        raise ValueError(f"unknown parser variant {variant!r}; use one of {list(MMMU_VARIANTS)}")
    root = Path(root)
    if not root.is_dir():
        raise DataError(str(root), "responses folder not found")
    by_subject: dict[str, list[dict]] = {}
    files: dict[str, Path] = {}
    unknown = []
    for sub in sorted(p for p in root.iterdir() if p.is_dir() and (p / "output.json").is_file()):
        name = mparse.SUBJECT_ORDER.get(sub.name, sub.name)  # full name or official short key
        if name not in mparse.SUBJECT_TO_DISCIPLINE:
            unknown.append(sub.name)
            continue
        if name in by_subject:
            raise DataError(str(sub), f"subject {name!r} has two folders ({files[name].parent.name} and {sub.name})")
        files[name] = sub / "output.json"
        by_subject[name] = read_output_json(files[name])
    if not by_subject:
        raise DataError(str(root), "no <Subject>/output.json found")

    rng = fallback_rng(use_random, seed)
    parse_mc = mparse.parse_multi_choice_lenient if variant == "lenient-mc" else mparse.parse_multi_choice
    rows: list[dict] = []
    seen: set = set()
    duplicates = []
    counts = {"list_string_golds": 0, "non_string_responses": 0, "empty_responses": 0, "fallbacks": 0}
    for subject, rec in mparse.official_order(by_subject):
        qtype = mparse.normalize_question_type(rec["question_type"])
        response, problem = response_text(rec.get("response"))
        answer = gold_dict[rec["id"]]["ground_truth"] if rec["id"] in gold_dict else rec.get("answer")
        if rec["id"] in seen:
            duplicates.append(rec["id"])
        seen.add(rec["id"])
        gold = answer
        if isinstance(answer, str) and answer.lstrip().startswith("[") and isinstance(mparse.parse_gold(answer), list):
            counts["list_string_golds"] += 1
            if parse_list_gold:
                gold = mparse.parse_gold(answer)
        row = {"id": rec["id"], "subject": subject, "discipline": mparse.SUBJECT_TO_DISCIPLINE[subject],
               "question_type": qtype}
        if qtype == "multiple-choice":
            all_choices = list(rec["all_choices"])
            parsed = parse_mc(response, all_choices, rec["index2ans"], rng)
            pred, fallback, mode = parsed.pred, parsed.fallback, parsed.mode
            correct = None if answer is None else (pred is not None and mparse.eval_multi_choice(gold, pred))
        else:
            pred, fallback, mode = mparse.parse_open(response, fixed_split=variant == "fixed-split"), False, "open"
            correct = None if answer is None else mparse.eval_open(gold, pred)
        row.update(parsed_pred=pred, answer=answer, correct=correct, fallback=fallback, mode=mode)
        mark_response(row, response, problem, fallback, counts)
        rows.append(row)

    judged = [r for r in rows if r["correct"] is not None]
    per_subject = tally(rows, "subject")
    per_discipline = OrderedDict()
    official = OrderedDict()
    for discipline, subjects in mparse.DISCIPLINES.items():
        present = [s for s in subjects if s in per_subject]
        if not present:
            continue
        c = sum(per_subject[s]["correct"] for s in present)
        n = sum(per_subject[s]["n"] for s in present)
        per_discipline[discipline] = {**entry(c, n), "subjects": len(present), "complete": len(present) == len(subjects)}
        official[f"Overall-{discipline}"] = {"num": n, "acc": round(c / n, 3) if n else 0}
        for s in present:
            official[s] = {"num": per_subject[s]["n"], "acc": round(per_subject[s]["accuracy"], 3)}
    overall = entry(sum(bool(r["correct"]) for r in judged), len(judged))
    official["Overall"] = {"num": overall["n"], "acc": round(overall["accuracy"], 3) if overall["n"] else 0}
    missing = [s for s in mparse.SUBJECT_ORDER.values() if s not in by_subject]
    warn = []
    if missing:
        warn.append(f"{len(missing)} of 30 subjects have no output.json: {missing}; Overall covers only those present")
    if unknown:
        warn.append(f"folders that are not subjects were skipped: {unknown}")
    if duplicates:
        warn.append(f"{len(duplicates)} duplicate ids (each counted, as the official scorer does): {duplicates[:10]}")
    warn_all(warn)
    summary = {
        "format": "subject-folders", "input": str(root), "answers": None if answers is None else str(answers),
        "parser": variant,
        "random_fallback": f"random.Random({seed_text(seed)})" if use_random else "none (scored wrong)",
        "overall": overall, "per_subject": dict(per_subject), "per_discipline": dict(per_discipline),
        "per_question_type": tally(rows, "question_type"),
        "counts": {"items": len(rows), "judged": len(judged), "unjudged": len(rows) - len(judged), **counts,
                   "duplicate_ids": len(duplicates), "subjects": len(by_subject)},
        "subjects_present": [s for s in mparse.SUBJECT_ORDER.values() if s in by_subject],
        "subjects_missing": missing, "unknown_folders": unknown, "official": dict(official), "warnings": warn,
    }
    return rows, summary
