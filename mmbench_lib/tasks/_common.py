"""Helpers shared by the benchmark modules: JSON reading with errors that name file and field."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from mmbench_lib.core.items import DataError


def read_json(path: str | os.PathLike) -> object:
    path = Path(path)
    if not path.is_file():
        raise DataError(str(path), "annotation file not found")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise DataError(str(path), f"not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None


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
    root_p = Path(root).resolve()
    p = (root_p / rel).resolve()
    if root_p != p and root_p not in p.parents:
        return str(p), f"path {rel!r} points outside its root {str(root_p)!r}"
    return str(p), None


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
