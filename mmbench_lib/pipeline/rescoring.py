"""Rescore model outputs saved in the official formats, with the official parsers.

A generation task names its format in ``Task.official_output``; :data:`SCORERS` maps each format to its
scorer, and :func:`score_responses` picks it for a benchmark.

``subject-folders`` (MMMU, docs/protocols.md §3.7-3.9): ``DIR/<Subject>/output.json`` lists of ``{id, question_type, answer,
all_choices, index2ans, response}``; one ``random.Random(42)`` consumed by the MC fallbacks in the
official short-key subject order, within a subject in file order; per subject / discipline /
overall question-weighted accuracies as ``main_eval_only.py`` prints them.

``responses-and-gold-jsonl`` (CMMMU, docs/protocols.md §4.4-4.6): response rows ``{id, type, response}`` or answer-mode rows ``{id, type,
answer}``, gold rows ``{id, type, answer}`` (the ``cmmmu-data-*`` files qualify: they also carry
options and category); one ``random.Random(42)`` consumed by MC fallbacks and T/F ties in the
official category order, within a category in output-file order.

More: docs/modules.md, ``mmbench_lib/pipeline/rescoring.py``.
"""
from __future__ import annotations

import io
import json
import random
import warnings
from collections import OrderedDict
from pathlib import Path

from mmbench_lib.core.items import DataError, read_utf8
from mmbench_lib.tasks import cmmmu_official as cofficial
from mmbench_lib.tasks import cmmmu_parser as cparse
from mmbench_lib.tasks import mmmu_parser as mparse
from mmbench_lib.tasks.mmmu import read_answer_dict
from mmbench_lib.core.metrics import entry
from mmbench_lib.core.outdir import check_out
from mmbench_lib.core.store import write_json_atomic
from mmbench_lib.tasks.base import all_tasks, get_task

__all__ = ["SCORERS", "score_responses", "write_outputs", "print_table"]


def _acc(correct: int, num: int) -> dict:
    """An accuracy entry of the ``core.metrics`` schema (fraction; no interval computed here)."""
    return entry(correct, num)


def _response_text(value) -> tuple[str, str | None]:
    """The response as a string and, when it was not a non-empty string, why (marked per item)."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value), f"not a string ({type(value).__name__}); used str()"
    return "", f"not a string ({type(value).__name__}); treated as empty"


def _mark_response(row: dict, response: str, problem: str | None, fallback: bool, counts: dict) -> None:
    """The per-item step every official format shares: mark an empty or non-string response on the row and
    count it and the random fallback (``counts``: ``fallbacks``, ``empty_responses``, ``non_string_responses``)."""
    row["response_empty"] = not response.strip()
    counts["fallbacks"] += fallback
    counts["empty_responses"] += row["response_empty"]
    if problem:
        row["response_error"] = problem
        counts["non_string_responses"] += 1


def _warn(warn: list[str]) -> list[str]:
    """Each problem of the inputs as a Python warning too (the summary keeps them as a list)."""
    for w in warn:
        warnings.warn(w, stacklevel=3)
    return warn


def _tally(rows: list[dict], key: str) -> dict:
    out: dict = OrderedDict()
    for r in rows:
        if r.get("correct") is None:
            continue
        c, n = out.get(r[key], (0, 0))
        out[r[key]] = (c + bool(r["correct"]), n + 1)
    return {k: _acc(c, n) for k, (c, n) in out.items()}


def _seed_text(seed) -> str:
    return "given generator" if isinstance(seed, random.Random) else str(seed)


# ---------------------------------------------------------------------------------------------- MMMU

def _read_output_json(path: Path) -> list[dict]:
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
        if not _scalar_id(rec["id"]):
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


def _scalar_id(value) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


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


def _rng(use_random: bool, seed) -> random.Random | None:
    """The fallback RNG: ``random.Random(seed)`` (official: 42), a given ``random.Random`` as is, or none."""
    if not use_random:
        return None
    return seed if isinstance(seed, random.Random) else random.Random(seed)


#: MMMU parser variants: the official rules, and the non-official ones a protocol report compares
MMMU_VARIANTS = ("official", "lenient-mc", "fixed-split")


def score_mmmu_outputs(root, use_random: bool = True, parse_list_gold: bool = True, seed=42,
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
        by_subject[name] = _read_output_json(files[name])
    if not by_subject:
        raise DataError(str(root), "no <Subject>/output.json found")

    rng = _rng(use_random, seed)
    parse_mc = mparse.parse_multi_choice_lenient if variant == "lenient-mc" else mparse.parse_multi_choice
    rows: list[dict] = []
    seen: set = set()
    duplicates = []
    counts = {"list_string_golds": 0, "non_string_responses": 0, "empty_responses": 0, "fallbacks": 0}
    for subject, rec in mparse.official_order(by_subject):
        qtype = mparse.normalize_question_type(rec["question_type"])
        response, problem = _response_text(rec.get("response"))
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
        _mark_response(row, response, problem, fallback, counts)
        rows.append(row)

    judged = [r for r in rows if r["correct"] is not None]
    per_subject = _tally(rows, "subject")
    per_discipline = OrderedDict()
    official = OrderedDict()
    for discipline, subjects in mparse.DISCIPLINES.items():
        present = [s for s in subjects if s in per_subject]
        if not present:
            continue
        c = sum(per_subject[s]["correct"] for s in present)
        n = sum(per_subject[s]["n"] for s in present)
        per_discipline[discipline] = {**_acc(c, n), "subjects": len(present), "complete": len(present) == len(subjects)}
        official[f"Overall-{discipline}"] = {"num": n, "acc": round(c / n, 3) if n else 0}
        for s in present:
            official[s] = {"num": per_subject[s]["n"], "acc": round(per_subject[s]["accuracy"], 3)}
    overall = _acc(sum(bool(r["correct"]) for r in judged), len(judged))
    official["Overall"] = {"num": overall["n"], "acc": round(overall["accuracy"], 3) if overall["n"] else 0}
    missing = [s for s in mparse.SUBJECT_ORDER.values() if s not in by_subject]
    warn = []
    if missing:
        warn.append(f"{len(missing)} of 30 subjects have no output.json: {missing}; Overall covers only those present")
    if unknown:
        warn.append(f"folders that are not subjects were skipped: {unknown}")
    if duplicates:
        warn.append(f"{len(duplicates)} duplicate ids (each counted, as the official scorer does): {duplicates[:10]}")
    _warn(warn)
    summary = {
        "format": "subject-folders", "input": str(root), "answers": None if answers is None else str(answers),
        "parser": variant,
        "random_fallback": f"random.Random({_seed_text(seed)})" if use_random else "none (scored wrong)",
        "overall": overall, "per_subject": dict(per_subject), "per_discipline": dict(per_discipline),
        "per_question_type": _tally(rows, "question_type"),
        "counts": {"items": len(rows), "judged": len(judged), "unjudged": len(rows) - len(judged), **counts,
                   "duplicate_ids": len(duplicates), "subjects": len(by_subject)},
        "subjects_present": [s for s in mparse.SUBJECT_ORDER.values() if s in by_subject],
        "subjects_missing": missing, "unknown_folders": unknown, "official": dict(official), "warnings": warn,
    }
    return rows, summary


# --------------------------------------------------------------------------------------------- CMMMU

# the official files' reading (docs/protocols.md §4.6), shared with the reproduction audit
_jsonl_rows, _cmmmu_key, _gold_table = cofficial.jsonl_rows, cofficial.key, cofficial.gold_table
_NO_OPTION = cofficial.NO_OPTION


def score_cmmmu_outputs(responses, answers, questions=None, use_random: bool = True,
                        fixed_tf: bool = False, seed=42) -> tuple[list[dict], dict]:
    """Official CMMMU scoring of response- or answer-mode rows against gold rows (docs/protocols.md §4.4-4.6).

    ``responses``/``answers``/``questions``: a JSONL file or a folder of per-category JSONL files.
    ``questions`` supplies option texts (needed by the MC content pass) and categories when the
    answer rows lack them. Without option texts the items are scored as ``eval_script.py`` scores that gold file
    (empty option texts: a response reaching the content pass ties all four letters, wrong, no random draw; counted
    in ``counts.mc_without_options``). ``use_random=False``: no RNG (fallbacks and ties
    scored wrong; not official). ``fixed_tf``: the T/F negation bug fixed (not official).
    ``seed``: the fallback RNG's seed (official 42) or a ``random.Random`` to draw from.
    """
    gold = _gold_table(answers, questions)
    outputs: "OrderedDict[str, tuple[Path, int, dict]]" = OrderedDict()
    duplicates, ids_as_int = [], 0
    for f, n, row in _jsonl_rows(responses):
        qid = _cmmmu_key(row["id"])
        ids_as_int += qid != str(row["id"])
        if "response" not in row and "answer" not in row:
            raise DataError(str(f), f"line {n}: a row needs 'response' (response mode) or 'answer' (answer mode)", qid, "response")
        if qid in outputs:
            duplicates.append(qid)
        outputs[qid] = (f, n, row)  # last wins, at the first one's position
    if not outputs:
        raise DataError(str(responses), "no response rows (an empty file is not scored as 0%)")

    unknown_ids = [q for q in outputs if q not in gold]
    missing = [q for q in gold if q not in outputs]
    by_category: dict[str, list[str]] = OrderedDict()
    no_category = []
    for qid in outputs:
        if qid in gold:
            cat = gold[qid]["category"]
            if cat is None:
                no_category.append(qid)
            else:
                by_category.setdefault(cat, []).append(qid)
    order = cparse.official_order(by_category) + [(None, q) for q in no_category]

    rng = _rng(use_random, seed)
    rows: list[dict] = []
    counts = {"fallbacks": 0, "empty_responses": 0, "non_string_responses": 0, "type_mismatches": 0,
              "mc_without_options": 0, "answer_mode_rows": 0}
    for cat, qid in order:
        g = gold[qid]
        _f, _n, out = outputs[qid]
        ctype = g["type"]
        if out.get("type") not in (None, ctype):
            counts["type_mismatches"] += 1
        subject_zh = g.get("subcategory")
        row = {"id": qid, "category": cparse.CATEGORY_EN.get(cat, "(unknown)"), "category_zh": cat,
               "subject": cparse.SUBJECTS.get(cat, {}).get(subject_zh) if cat else None, "subject_zh": subject_zh,
               "type": ctype, "question_type": {"选择": "multiple-choice", "判断": "true-false", "填空": "fill-in-the-blank"}[ctype],
               "answer": g["answer"]}
        if "response" in out:
            response, problem = _response_text(out["response"])
            index2ans = g.get("index2ans")
            if ctype == "选择" and index2ans is None:
                index2ans = {letter: _NO_OPTION for letter in cparse.MC_CHOICES}
                row["options_unknown"] = True
                counts["mc_without_options"] += 1
            parsed, correct = cparse.evaluate_response(ctype, response, g["answer"], index2ans, rng, fixed=fixed_tf)
            row.update(mode="response", parsed_pred=parsed.pred, correct=bool(correct), fallback=parsed.fallback,
                       parse_mode=parsed.mode)
            _mark_response(row, response, problem, parsed.fallback, counts)
        else:
            pred = out["answer"]
            row.update(mode="answer", parsed_pred=pred, correct=bool(cparse.evaluate_answer(ctype, pred, g["answer"])),
                       fallback=False, parse_mode="answer", response_empty=pred in (None, ""))
            counts["answer_mode_rows"] += 1
        rows.append(row)

    per_category = OrderedDict()
    official = OrderedDict()
    for zh in cparse.CATEGORY_ORDER:
        sub = [r for r in rows if r["category_zh"] == zh]
        if sub:
            c = sum(r["correct"] for r in sub)
            per_category[cparse.CATEGORY_EN[zh]] = _acc(c, len(sub))
            official[cparse.CATEGORY_EN[zh]] = {"correct_num": c, "entries_num": len(sub), "acc": c / len(sub)}
    overall = _acc(sum(r["correct"] for r in rows), len(rows))
    official["Overall"] = {"correct_num": overall["correct"], "entries_num": overall["n"], "acc": overall["accuracy"] or 0}
    warn = []
    if unknown_ids:
        warn.append(f"{len(unknown_ids)} response ids have no gold answer (not scored): {unknown_ids[:10]}")
    if missing:
        warn.append(f"{len(missing)} gold ids have no response (left out of the accuracy): {missing[:10]}")
    if no_category:
        warn.append(f"{len(no_category)} ids have no category (scored last, after the six categories): {no_category[:10]}")
    if counts["mc_without_options"]:
        warn.append(f"{counts['mc_without_options']} multiple-choice items without option texts: scored as eval_script.py "
                    "scores this gold file (empty option texts tie in the content pass); pass --questions for the option texts")
    if duplicates:
        warn.append(f"{len(duplicates)} duplicate response ids (last one kept): {duplicates[:10]}")
    _warn(warn)
    summary = {
        "format": "responses-and-gold-jsonl", "input": {"responses": str(responses), "answers": str(answers),
                                        "questions": None if questions is None else str(questions)},
        "random_fallback": f"random.Random({_seed_text(seed)})" if use_random else "none (scored wrong)",
        "tf_negation": "fixed (not official)" if fixed_tf else "official",
        "overall": overall, "per_category": dict(per_category),
        "per_subject": {k: v for k, v in _tally(rows, "subject").items() if k is not None},
        "per_question_type": _tally(rows, "question_type"),
        "counts": {"items": len(rows), **counts, "unknown_ids": len(unknown_ids), "missing_responses": len(missing),
                   "duplicate_response_ids": len(duplicates), "no_category": len(no_category),
                   "response_ids_read_as_integers": ids_as_int},
        "unknown_id_examples": unknown_ids[:20], "missing_examples": missing[:20],
        "official": dict(official), "warnings": warn,
    }
    return rows, summary


# ------------------------------------------------------------------------------------------ output

def _score_gold_jsonl(responses, answers=None, questions=None, **kw):
    if answers is None:
        raise ValueError("this format needs --answers (gold rows {id, type, answer}, e.g. the data folder of the split)")
    return score_cmmmu_outputs(responses, answers, questions, **kw)


#: ``Task.official_output`` -> what ``--responses`` and ``--answers`` are in that format (for ``--help``)
FORMAT_HELP = {
    "subject-folders": ("DIR/<Subject>/output.json", "the test split's answer dict (answer_dict_test.json of the official repository; "
                        "optional: the other splits' gold answers are in output.json)"),
    "responses-and-gold-jsonl": ("a JSONL file or folder of {id, type, response} rows",
                                 "gold rows {id, type, answer} (a file or the split's data folder)"),
}

#: ``Task.official_output`` -> scorer ``(responses, answers, questions, **kw) -> (rows, summary)``
SCORERS = {
    "subject-folders": lambda responses, answers=None, questions=None, **kw: score_mmmu_outputs(responses, answers=answers,
                                                                                                 **kw),
    "responses-and-gold-jsonl": _score_gold_jsonl,
}


def _scorer(task):
    """The scorer of the task's ``official_output`` format, else the task's own ``score_official``, else None."""
    if task.official_output in SCORERS:
        return SCORERS[task.official_output]
    return task.score_official if task.official_output_help else None


def format_help(task) -> tuple[str, str]:
    """What ``--responses`` and ``--answers`` are for the task's format."""
    return FORMAT_HELP.get(task.official_output) or task.official_output_help


def score_responses(benchmark: str, responses, answers=None, questions=None, **kw) -> tuple[list[dict], dict]:
    """Score official-format responses of ``benchmark`` with the scorer of its ``official_output`` format."""
    task = get_task(benchmark)
    scorer = _scorer(task)
    if scorer is None:
        raise ValueError(f"score-responses supports {', '.join(t.name for t in scorable())}, not {benchmark!r}")
    rows, summary = scorer(responses, answers, questions, **kw)
    return rows, {"benchmark": task.name, **summary}


def scorable() -> list:
    """The tasks whose official response files can be rescored here."""
    return [t for t in all_tasks() if _scorer(t) is not None]


def check_out_folder(out, writes=("predictions.jsonl", "summary.json"), suggest: str = "rescored") -> Path:
    """``--out``: a folder that exists or can be made, holding no run and none of the files written there
    (``core.outdir.check_out``: one line naming a fresh folder instead); checked before any work."""
    return check_out(out, writes, suggest)


def write_outputs(rows: list[dict], summary: dict, out) -> tuple[Path, Path]:
    """``out/predictions.jsonl`` (one row per item) and ``out/summary.json``."""

    out = check_out_folder(out)
    out.mkdir(parents=True, exist_ok=True)
    pred = out / "predictions.jsonl"
    with open(pred, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
    write_json_atomic(out / "summary.json", summary)
    return pred, out / "summary.json"


def print_table(summary: dict) -> None:
    """The official-style table (name, number of items, accuracy x100) and the counts."""
    print(f"{'':40s} {'num':>6s} {'acc':>6s}")
    for name, v in summary["official"].items():
        num = v.get("num", v.get("entries_num"))
        acc = v["acc"]
        print(f"{name:40s} {num:6d} {100 * acc:6.1f}")
    print("counts: " + ", ".join(f"{k} {v}" for k, v in summary["counts"].items()))
    for w in summary.get("warnings", []):
        print(f"warning: {w}")
