"""Helpers shared by the benchmark modules: JSON reading with errors that name file and field."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from mmbench_lib.core.items import DataError, read_utf8
from mmbench_lib.core.paths import PathEscape, inside


def read_json(path: str | os.PathLike) -> object:
    path = Path(path)
    if not path.exists():
        raise DataError(str(path), "annotation file not found")
    try:
        return json.loads(read_utf8(path))  # not UTF-8, not a regular file, too large: DataError naming the file
    except json.JSONDecodeError as e:
        raise DataError(str(path), f"not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise DataError(str(path), "not valid JSON (nested deeper than the JSON reader allows)") from None


def require(record: dict, key: str, path, item_id, types=None):
    """``record[key]``, or a DataError naming the file, the item and the missing/mistyped field."""
    if not isinstance(record, dict):
        raise DataError(str(path), f"expected an object, got {type(record).__name__}", item_id)
    if key not in record:
        raise DataError(str(path), "field missing", item_id, key)
    value = record[key]
    if types is not None and not isinstance(value, types):
        names = "/".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))
        raise DataError(str(path), f"expected {names}, got {type(value).__name__} {value!r}", item_id, key)
    return value


def media_path(root: str | os.PathLike | None, rel: str) -> tuple[str, str | None]:
    """Resolve ``rel`` under ``root``; returns (path, error) where error flags a path escaping its root."""
    if root is None:
        return rel, "no media root given for this data source"
    try:
        return str(inside(root, rel)), None
    except PathEscape as e:  # absolute, ``..`` or a symlink leading out (core/paths.py)
        return str(Path(root) / rel), str(e)


def check_unique(seen: dict, item_id: str, path, where: str) -> None:
    """DataError when ``item_id`` was already read (``seen``: id -> where it was); else records it."""
    if item_id in seen:
        raise DataError(str(path), f"duplicate id (also at {seen[item_id]})", item_id, "question_id")
    seen[item_id] = where


def strict_int(value, path, item_id, field) -> int:
    """An integer field: an int (not a bool) or a string of digits; 3.7, true or "3a" are a DataError."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    raise DataError(str(path), f"not an integer: {value!r}", item_id, field)


def choices_abcd(q: dict, path, item_id) -> list[str]:
    """The four options ``choice_a``..``choice_d``: each a string; a ``choice_e``.. is an error, never dropped."""
    out = []
    for c in "abcd":
        v = require(q, f"choice_{c}", path, item_id)
        if not isinstance(v, str):
            raise DataError(str(path), f"expected a string, got {type(v).__name__} {v!r}", item_id, f"choice_{c}")
        out.append(v)
    extra = sorted(k for k in q if isinstance(k, str) and k.startswith("choice_") and k not in {f"choice_{c}" for c in "abcd"})
    if extra:
        raise DataError(str(path), f"unexpected extra choice(s) {extra}; this benchmark has exactly 4 (A-D)", item_id, extra[0])
    return out


#: ``MMBENCH_KEEP_GOING=1``: an item a loader would refuse (identical choices, a one-frame video) is kept
#: and marked failed with the reason instead, so the rest of the file can run
KEEP_GOING_ENV = "MMBENCH_KEEP_GOING"


def keep_going() -> bool:
    return os.environ.get(KEEP_GOING_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def refuse_or_mark(item, path, field: str, why: str) -> None:
    """An item that cannot be scored as given: ``DataError`` naming file, item and field, or, with
    ``MMBENCH_KEEP_GOING=1``, the item kept and failed with the reason (blind and vision runs alike: it
    is the item's ``media_error``, checked before any model call)."""
    if not keep_going():
        raise DataError(str(path), f"{why} (set {KEEP_GOING_ENV}=1 to keep going with the item marked failed)",
                        item.id, field)
    item.meta.setdefault("media_error", f"{field}: {why}")


def duplicate_choices(choices: list[str]) -> str | None:
    """Why identical options cannot be ranked (content ranking scores both copies alike, so the
    second can never be chosen), or ``None``."""
    first: dict[str, int] = {}
    for i, c in enumerate(choices):
        if c in first:
            return f"options {'ABCD'[first[c]]} and {'ABCD'[i]} are identical ({c!r}): ranking can never pick the second"
        first[c] = i
    return None


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def question_id_and_dimension(q, i: int, path, seen: dict, known, benchmark: str) -> tuple[str, int]:
    """A SEED question's id (unique in its file) and dimension id (an int among ``known``); else ``DataError``."""
    qid = str(require(q, "question_id", path, f"#{i}", (str, int)))
    check_unique(seen, qid, path, f"question #{i}")
    dim = strict_int(require(q, "question_type_id", path, qid), path, qid, "question_type_id")
    if dim not in known:
        raise DataError(str(path), f"unknown dimension id {dim} ({benchmark} has 1-{max(known)})", qid, "question_type_id")
    return qid, dim
