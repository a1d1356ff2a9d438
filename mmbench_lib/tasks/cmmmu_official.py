"""CMMMU's official scorer (``eval_script.py``, docs/protocols.md §4.4-4.6) and the files it reads: JSONL rows, the id
they are joined by, and the gold table of ``{id, type, answer}`` rows (the ``cmmmu-data-*`` files qualify).

The ``responses-and-gold-jsonl`` format: response rows ``{id, type, response}`` or answer-mode rows ``{id, type,
answer}``, gold rows ``{id, type, answer}`` (also carrying options and category in the data files); one
``random.Random(42)`` consumed by MC fallbacks and T/F ties in the official category order, within a category in
output-file order. Reached as ``get_task("cmmmu").score_official(...)`` (``mmbench score-responses``, the generation
runs' scoring); the reproduction audit (``tasks/cmmmu_audit.py``) reads the same files the same way.
"""
from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from mmbench_lib.core.items import DataError
from mmbench_lib.core.jsonl import read_rows
from mmbench_lib.core.metrics import entry
from mmbench_lib.tasks import cmmmu_parser as cparse
from mmbench_lib.tasks.official_common import (fallback_rng, mark_response, response_text, scalar_id, seed_text, tally,
                                               warn_all)

#: the text of an option a gold row does not carry: ``eval_script.py`` reads ``data_value.get('option1', '')``, so
#: it is empty, and the content pass finds it everywhere (all four letters tie: "ABCD", wrong, no random draw)
NO_OPTION = ""


def jsonl_files(source) -> list[Path]:
    path = Path(source)
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(path.rglob("*.jsonl"))
        if files:
            return files
        raise DataError(str(path), "no .jsonl files in this folder")
    raise DataError(str(path), "file or folder not found")


def jsonl_rows(source):
    """``(file, line_no, row)`` for every non-empty line of a JSONL file or folder of them."""
    for f in jsonl_files(source):
        for n, row in read_rows(f, objects=False):  # core.jsonl: bounded, universal newlines, one line per bad line
            if not isinstance(row, dict) or "id" not in row:
                raise DataError(str(f), f"line {n}: field missing", None, "id")
            if not scalar_id(row["id"]):
                raise DataError(str(f), f"line {n}: an id is a string or an integer, got {type(row['id']).__name__}",
                                None, "id")
            yield f, n, row


def key(value) -> str:
    """The id an official CMMMU file is joined by: ``eval_script.py`` keys both files by ``int(id)``, so
    ``"0012 "`` and ``12`` are one question (docs/protocols.md §4.6); an id that is no integer is kept as written."""
    text = str(value)
    try:
        return str(int(text))
    except ValueError:
        return text


def option_texts(f: Path, n: int, row: dict) -> dict[str, str]:
    """The row's option texts; an option that is neither a string nor null is refused (the official
    content pass counts it in the response with ``str.count``, which needs a string; docs/protocols.md §4.4)."""
    for i in range(1, 5):
        v = row.get(f"option{i}")
        if v is not None and not isinstance(v, str):
            raise DataError(str(f), f"line {n}: an option text is a string, got {type(v).__name__} {v!r}",
                            str(row["id"]), f"option{i}")
    return cparse.index2ans_from_record(row)


def category_of(row: dict, path: Path) -> str | None:
    """Chinese category from the row's ``category``, else from the file or folder name (docs/protocols.md §4.1, §4.6)."""
    for name in (row.get("category"), path.stem, path.parent.name):
        if not name:
            continue
        try:
            return cparse.official_order({name: [None]})[0][0]
        except ValueError:
            continue
    return None


def gold_problem(ctype: str, answer) -> str | None:
    """Why a CMMMU gold answer cannot be scored (docs/protocols.md §4.1: a string; multiple choice
    its option letter(s) A-D), or ``None``."""
    if not isinstance(answer, str) or not answer.strip():
        return f"gold answer {answer!r} is not a non-empty string"
    if ctype == "选择" and not set(answer.strip()) <= set(cparse.MC_CHOICES):
        return f"multiple-choice gold answer {answer!r} names no option of {list(cparse.MC_CHOICES)}"
    return None


def gold_table(answers, questions=None) -> dict[str, dict]:
    """``{id: {type, answer, category, subcategory[, index2ans]}}`` of gold rows (a JSONL file or folder), in file
    order; ``questions`` supplies option texts and categories the gold rows lack."""
    gold: dict[str, dict] = {}
    for f, n, row in jsonl_rows(answers):
        qid = key(row["id"])
        if "answer" not in row:
            raise DataError(str(f), f"line {n}: field missing", qid, "answer")
        if row.get("type") not in cparse.INSTRUCTIONS:
            raise DataError(str(f), f"line {n}: unknown type {row.get('type')!r} (expected 选择/判断/填空)", qid, "type")
        why = gold_problem(row["type"], row["answer"])
        if why:
            raise DataError(str(f), f"line {n}: {why}; not scored", qid, "answer")
        if qid in gold:
            raise DataError(str(f), f"line {n}: id given twice in the gold rows", qid, "id")
        entry = {"type": row["type"], "answer": row["answer"], "category": category_of(row, f),
                 "subcategory": row.get("subcategory")}
        if any(f"option{i}" in row for i in range(1, 5)):
            entry["index2ans"] = option_texts(f, n, row)
        gold[qid] = entry
    if not gold:
        raise DataError(str(answers), "no gold rows")
    if questions is not None:
        seen = set()
        for f, n, row in jsonl_rows(questions):
            k = key(row["id"])
            if k in seen:
                raise DataError(str(f), f"line {n}: id given twice in the questions", k, "id")
            seen.add(k)
            entry = gold.get(k)
            if entry is None:
                continue
            if entry["category"] is None:
                entry["category"] = category_of(row, f)
            entry["subcategory"] = entry["subcategory"] or row.get("subcategory")
            if "index2ans" not in entry and any(f"option{i}" in row for i in range(1, 5)):
                entry["index2ans"] = option_texts(f, n, row)
    return gold


def score_outputs(responses, answers, questions=None, use_random: bool = True,
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
    gold = gold_table(answers, questions)
    outputs: "OrderedDict[str, tuple[Path, int, dict]]" = OrderedDict()
    duplicates, ids_as_int = [], 0
    for f, n, row in jsonl_rows(responses):
        qid = key(row["id"])
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

    rng = fallback_rng(use_random, seed)
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
            response, problem = response_text(out["response"])
            index2ans = g.get("index2ans")
            if ctype == "选择" and index2ans is None:
                index2ans = {letter: NO_OPTION for letter in cparse.MC_CHOICES}
                row["options_unknown"] = True
                counts["mc_without_options"] += 1
            parsed, correct = cparse.evaluate_response(ctype, response, g["answer"], index2ans, rng, fixed=fixed_tf)
            row.update(mode="response", parsed_pred=parsed.pred, correct=bool(correct), fallback=parsed.fallback,
                       parse_mode=parsed.mode)
            mark_response(row, response, problem, parsed.fallback, counts)
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
            per_category[cparse.CATEGORY_EN[zh]] = entry(c, len(sub))
            official[cparse.CATEGORY_EN[zh]] = {"correct_num": c, "entries_num": len(sub), "acc": c / len(sub)}
    overall = entry(sum(r["correct"] for r in rows), len(rows))
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
    warn_all(warn)
    summary = {
        "format": "responses-and-gold-jsonl", "input": {"responses": str(responses), "answers": str(answers),
                                        "questions": None if questions is None else str(questions)},
        "random_fallback": f"random.Random({seed_text(seed)})" if use_random else "none (scored wrong)",
        "tf_negation": "fixed (not official)" if fixed_tf else "official",
        "overall": overall, "per_category": dict(per_category),
        "per_subject": {k: v for k, v in tally(rows, "subject").items() if k is not None},
        "per_question_type": tally(rows, "question_type"),
        "counts": {"items": len(rows), **counts, "unknown_ids": len(unknown_ids), "missing_responses": len(missing),
                   "duplicate_response_ids": len(duplicates), "no_category": len(no_category),
                   "response_ids_read_as_integers": ids_as_int},
        "unknown_id_examples": unknown_ids[:20], "missing_examples": missing[:20],
        "official": dict(official), "warnings": warn,
    }
    return rows, summary
