"""The files the official CMMMU scorer reads (docs/protocols.md §4.6): JSONL rows, the id they are joined by,
and the gold table of ``{id, type, answer}`` rows (the ``cmmmu-data-*`` files qualify).

Shared by ``pipeline/rescoring.py`` (``score-responses --benchmark cmmmu``) and the reproduction audit
(``tasks/cmmmu_audit.py``), so both read the same files the same way.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

from mmbench_lib.core.items import DataError, read_utf8
from mmbench_lib.tasks import cmmmu_parser as cparse

#: the text of an option a gold row does not carry: ``eval_script.py`` reads ``data_value.get('option1', '')``, so
#: it is empty, and the content pass finds it everywhere (all four letters tie: "ABCD", wrong, no random draw)
NO_OPTION = ""


def scalar_id(value) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


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
        with io.StringIO(read_utf8(f), newline=None) as fh:  # the line splitting of open(f)
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise DataError(str(f), f"line {n} is not valid JSON ({e.msg})") from None
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
