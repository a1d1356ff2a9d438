"""One reader of JSON-lines files: bounded, line by line, a one-line error naming file, line and problem.

:func:`parse_line` parses every JSONL line the suite reads (official outputs, audit inputs, CMMMU data files, the run
store's predictions); :func:`read_rows` reads a file row by row:

- a file over :data:`MAX_FILE_BYTES` or a line over :data:`MAX_LINE_BYTES` is refused, the limit named; a path that
  is not a regular file (a folder, a FIFO) before it is opened;
- lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (as ``open()`` reads them); blank lines are skipped and counted;
- ``comma_terminated=True`` reads SEED-Bench's leaderboard files, whose lines end with a comma (docs/protocols.md
  §1.5): the comma is dropped and counted;
- a bad line is a ``DataError``: ``<file>: line <n> is not valid JSON (Expecting value)``.

More: docs/modules.md (``core/jsonl.py``).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Iterator

from mmbench_lib.core.items import DataError, regular_file

#: the largest JSONL file read (bytes): SEED-Bench-2's leaderboard file is 1.5 MB, a full run's predictions a few MB
MAX_FILE_BYTES = 1 << 30
#: the longest line read (bytes): one row with a long response is kilobytes
MAX_LINE_BYTES = 1 << 26


def parse_line(raw: bytes | str, *, objects: bool = True, comma_terminated: bool = False,
               invalid: str = "not valid JSON") -> tuple[Any, str | None]:
    """``(value, None)`` for one non-blank line, or ``(None, problem)``; ``problem`` completes "line n is ...".
    ``invalid``: the words for a line that does not parse (SEED's reader says "not a JSON object")."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 (byte 0x{raw[e.start]:02x})"
    text = text.strip()
    if comma_terminated:
        text = text.rstrip(",").strip()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        return None, f"{invalid} ({e.msg})"
    except RecursionError:
        return None, f"{invalid} (nested too deep)"
    if objects and not isinstance(value, dict):
        return None, f"not a JSON object (got {type(value).__name__})"
    return value, None


def rows_of(lines: Iterable[tuple[int, bytes | str]], source, *, objects: bool = True, comma_terminated: bool = False,
            counts: dict | None = None, invalid: str = "not valid JSON") -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of numbered lines (blank ones skipped and counted); DataError on a bad line."""
    for n, raw in lines:
        stripped = raw.strip()
        if comma_terminated and stripped.endswith(b"," if isinstance(stripped, bytes) else ","):
            _count(counts, "comma_terminated_lines")
            stripped = stripped.rstrip(b"," if isinstance(stripped, bytes) else ",").strip()
        if not stripped:
            _count(counts, "blank_lines")
            continue
        value, problem = parse_line(stripped, objects=objects, invalid=invalid)
        if problem:
            raise DataError(str(source), f"line {n} is {problem}")
        yield n, value


def read_rows(path, *, objects: bool = True, comma_terminated: bool = False, counts: dict | None = None,
              invalid: str = "not valid JSON", max_file: int = MAX_FILE_BYTES,
              max_line: int = MAX_LINE_BYTES) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of the JSONL file ``path``, read line by line (see the
    module docstring for the bounds, the blank and comma-terminated lines and the errors)."""
    yield from rows_of(lines(path, max_file, max_line), path, objects=objects, comma_terminated=comma_terminated,
                       counts=counts, invalid=invalid)


def first_row(path, **kw) -> Any | None:
    """The value of the first non-blank line of ``path`` (:func:`read_rows` options), or None when the file is
    missing, empty or that line is bad: what a format detector looks at."""
    try:
        return next((value for _n, value in read_rows(path, **kw)), None)
    except (DataError, OSError):
        return None


def bounded_bytes(path, max_file: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a JSONL file read whole (the run store's scan), after the checks of :func:`lines`."""
    return _checked(path, max_file).read_bytes()


def _checked(path, max_file: int) -> Path:
    path = Path(path)
    size = regular_file(path).stat().st_size
    if size > max_file:
        raise DataError(str(path), f"a JSONL file of {size:,} bytes is larger than the limit of {max_file:,} bytes "
                                   "(core.jsonl.MAX_FILE_BYTES)")
    return path


def lines(path, max_file: int = MAX_FILE_BYTES, max_line: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw bytes without the line end)`` of a regular file of at most ``max_file`` bytes, no line
    longer than ``max_line`` bytes; DataError naming the file (and line) and the limit otherwise."""
    path = _checked(path, max_file)
    n = 0
    with open(path, "rb") as f:
        while True:
            raw = f.readline(max_line + 1)
            if not raw:
                return
            if len(raw) > max_line and not raw.endswith(b"\n"):
                raise DataError(str(path), f"line {n + 1} is longer than the limit of {max_line:,} bytes "
                                           "(core.jsonl.MAX_LINE_BYTES)")
            body = raw[:-1] if raw.endswith(b"\n") else raw
            body = body[:-1] if body.endswith(b"\r") else body  # "\r\n", or a last line ended by "\r"
            for part in body.split(b"\r"):  # a lone "\r" ends a line too
                n += 1
                yield n, part


def _count(counts: dict | None, key: str) -> None:
    if counts is not None:
        counts[key] = counts.get(key, 0) + 1
