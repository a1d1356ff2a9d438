"""The run store: ``outputs/<run-id>/`` with predictions, manifest and metrics.

Predictions are appended and flushed per batch, one JSON object per line. Reopening a run
skips finished items and never duplicates them. A line that is not a JSON object with a
string ``id`` (corrupt, NUL bytes, or a last line cut off by an interrupted write) is moved to
``predictions.quarantine.jsonl`` with its line number and a warning; the valid rows around it
are kept and only that item is scored again. ``readonly=True`` (every reader) never writes.
A writer holds an exclusive lock on ``run.lock`` (its pid, host and start time inside), so a
second process writing the same run is refused. Metrics are computed only from this file.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import math
import os
import socket
import warnings
import weakref
from pathlib import Path

from mmbench_lib.core.jsonl import bounded_bytes, parse_line

PREDICTIONS, MANIFEST, METRICS = "predictions.jsonl", "manifest.json", "metrics.json"


class RunLockedError(RuntimeError):
    """Another process is writing this run."""


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def not_finite(value, where: str = "") -> str | None:
    """The path of the first NaN or infinite float in ``value`` (``scores.sum[1]``), or ``None``: such a value has
    no strict-JSON form, and the run store writes strict JSON only."""
    if isinstance(value, float) and not math.isfinite(value):
        return where or "value"
    if isinstance(value, dict):
        parts = ((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        parts = ((f"{where}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    return next((hit for name, v in parts if (hit := not_finite(v, name))), None)


def _line(row: dict) -> str:
    """One predictions line: strict JSON (``allow_nan=False``; the loop fails an item whose values are not finite,
    anything else with such a value is refused naming the item and field)."""
    try:
        return json.dumps(row, ensure_ascii=False, default=str, allow_nan=False) + "\n"
    except ValueError:
        raise ValueError(f"item {row.get('id')!r}, field {not_finite(row)!r}: a value that is not finite (NaN or "
                         f"infinity) has no place in predictions.jsonl (strict JSON)") from None


def write_json_atomic(path: Path, obj) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n")


def scan_jsonl(data: bytes) -> tuple[list[dict], list[tuple[int, bytes, bytes, str]]]:
    """Split JSONL bytes into rows (JSON objects with a string ``id``) and bad lines
    ``(line number, raw bytes incl. newline, raw line, reason)``; a last line without a newline is bad."""
    rows, bad = [], []
    pos, n = 0, 0
    while pos < len(data):
        n += 1
        end = data.find(b"\n", pos)
        raw = data[pos:] if end < 0 else data[pos:end + 1]
        pos = len(data) if end < 0 else end + 1
        line = raw.rstrip(b"\n").strip()
        if not line:
            continue
        reason = None
        if end < 0:
            reason = "last line has no newline (write cut off)"
        elif b"\x00" in line:
            reason = "line holds NUL bytes"
        else:
            obj, problem = parse_line(line, objects=False)  # core.jsonl: the suite's one JSONL line parser
            if problem:
                reason = problem
            elif not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
                reason = f"not a JSON object with a string 'id' (got {type(obj).__name__})"
            else:
                rows.append(obj)
        if reason:
            bad.append((n, raw, line, reason))
    return rows, bad


class StoreFileError(ValueError):
    """A run store's file that is not a regular file (a folder in its place): one line naming it."""


def _not_a_folder(*paths: Path) -> None:
    for p in paths:
        if p.exists() and not p.is_file():
            raise StoreFileError(f"{p}: a {'folder' if p.is_dir() else 'special file'} where the run store keeps a file; "
                                 f"move it away (or use another run folder)")


def read_jsonl(path: Path) -> tuple[list[dict], list[tuple[int, str]]]:
    """Rows of a JSONL file and its bad lines as ``(line number, reason)``, each warned about; never writes."""
    path = Path(path)
    if not path.exists():
        return [], []
    _not_a_folder(path)
    rows, bad = scan_jsonl(bounded_bytes(path))
    for n, _, _, reason in bad:
        warnings.warn(f"{path}: line {n} skipped: {reason}", stacklevel=2)
    return rows, [(n, reason) for n, _, _, reason in bad]


SHARDS = "shards"  # the folder under a run holding its shards' folders


def shard_suffix(shard: tuple[int, int] | None) -> str:
    """``""`` for an unsharded run, ``".shard-02-of-08"`` for shard 2 of 8."""
    if not shard or shard[1] <= 1:
        return ""
    return f".shard-{shard[0]:02d}-of-{shard[1]:02d}"


def store_file(run_dir: str | os.PathLike, name: str, shard: tuple[int, int] | None = None) -> Path:
    """The path of one of a store's files (``PREDICTIONS``, ``MANIFEST``, ``METRICS``) for a shard:
    ``predictions.jsonl`` -> ``<run_dir>/predictions.shard-00-of-02.jsonl``."""
    stem, dot, ext = name.partition(".")
    return Path(run_dir) / f"{stem}{shard_suffix(shard)}{dot}{ext}"


def shard_dir(run_dir: str | os.PathLike, shard: tuple[int, int] | None) -> Path:
    """The folder a shard of a run writes to: ``<run>/shards/<index>-of-<count>/`` (its params,
    executed notebook, store, tables and figures), so shards of one run never share a file; the
    run folder itself for an unsharded run (``None`` or one shard). Only the merge writes the run's
    own names."""
    if not shard or shard[1] <= 1:
        return Path(run_dir)
    return Path(run_dir) / SHARDS / f"{shard[0]}-of-{shard[1]}"


#: lock file (resolved path) -> [fd, number of RunStore objects of this process using it]
_HELD: dict[str, list] = {}


def _acquire(lock_path: Path, run_dir: Path) -> str:
    """Take the run's exclusive lock (shared by the RunStores of this process); the holder's pid,
    host and time are written in the lock file. A lock held by another process: RunLockedError.
    The holder removes the file when it lets go (:func:`_release`), so a lock taken on a file that was
    removed meanwhile is taken again on the file now at the path."""
    key = str(lock_path.resolve())
    if key in _HELD:
        _HELD[key][1] += 1
        return key
    while True:
        fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 512, 0).decode("utf-8", "replace").strip() or "unknown holder"
            os.close(fd)
            raise RunLockedError(f"{run_dir} is being written by another process ({holder}); wait for it to end "
                                 f"or use another run id") from None
        try:
            same = os.stat(key).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the holder before us removed this file as it let go: lock the one at the path now
    os.ftruncate(fd, 0)
    stamp = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    os.pwrite(fd, f"pid {os.getpid()} on host {socket.gethostname()} since {stamp}\n".encode(), 0)
    _HELD[key] = [fd, 1]
    return key


def _release(key: str) -> None:
    """Let go of the lock; the last user in this process removes the lock file first (no ``run.lock`` is
    left behind by a run that ended)."""
    held = _HELD.get(key)
    if held is None:
        return
    held[1] -= 1
    if held[1] <= 0:
        del _HELD[key]
        try:
            with contextlib.suppress(OSError):
                os.unlink(key)
            fcntl.flock(held[0], fcntl.LOCK_UN)
        finally:
            os.close(held[0])


def lock_holder(run_dir: str | os.PathLike) -> str | None:
    """Who holds a lock of ``run_dir`` (``run.lock`` or a shard's), as its lock file says, or ``None`` when no
    process is writing it (readers use it to mark a run whose metrics are older than its rows)."""
    for path in sorted(Path(run_dir).glob("run*.lock")):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return os.pread(fd, 512, 0).decode("utf-8", "replace").strip() or "unknown holder"
        finally:
            os.close(fd)
    return None


class RunStore:
    """``shard=(index, count)`` gives each shard its own predictions, manifest and lock file in the
    same folder (``predictions.shard-00-of-04.jsonl``), so shards never write to one file.
    ``readonly=True`` reads what is there (bad lines skipped with a warning) and never writes."""

    def __init__(self, run_dir: str | os.PathLike, shard: tuple[int, int] | None = None, readonly: bool = False):
        self.dir = Path(run_dir)
        self.readonly = readonly
        self.suffix = shard_suffix(shard)
        self.shard = shard
        self.predictions_path = store_file(self.dir, PREDICTIONS, shard)
        self.quarantine_path = store_file(self.dir, "predictions.quarantine.jsonl", shard)
        self.manifest_path = store_file(self.dir, MANIFEST, shard)
        self.lock_path = store_file(self.dir, "run.lock", shard)
        self._finalizer = None
        _not_a_folder(self.predictions_path, self.manifest_path, self.lock_path, store_file(self.dir, METRICS, shard))
        if readonly:
            rows, _ = read_jsonl(self.predictions_path)
        else:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._finalizer = weakref.finalize(self, _release, _acquire(self.lock_path, self.dir))
            rows = self._load_and_quarantine()
        self._rows = {}
        for r in rows:
            self._rows[r["id"]] = r

    def _load_and_quarantine(self) -> list[dict]:
        """Rows of the predictions file; bad lines moved to the quarantine file, valid ones kept in order."""
        if not self.predictions_path.exists():
            return []
        data = bounded_bytes(self.predictions_path)
        rows, bad = scan_jsonl(data)
        if not bad:
            return rows
        stamp = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        with open(self.quarantine_path, "a", encoding="utf-8") as f:
            for n, _, line, reason in bad:
                f.write(json.dumps({"line": n, "reason": reason, "file": self.predictions_path.name, "quarantined": stamp,
                                    "raw": line.decode("utf-8", "backslashreplace")}, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
        bad_lines = {n for n, *_ in bad}
        kept, pos, n = [], 0, 0
        while pos < len(data):  # the file without the bad lines, valid lines byte for byte
            n += 1
            end = data.find(b"\n", pos)
            raw = data[pos:] if end < 0 else data[pos:end + 1]
            pos = len(data) if end < 0 else end + 1
            if n not in bad_lines:
                kept.append(raw)
        write_bytes_atomic(self.predictions_path, b"".join(kept))
        for n, _, _, reason in bad:
            warnings.warn(f"{self.predictions_path}: line {n} quarantined to {self.quarantine_path.name} ({reason}); "
                          f"its item will be scored again", stacklevel=3)
        return rows

    def close(self) -> None:
        """Release the run's lock (also done when the store is garbage collected)."""
        if self._finalizer is not None:
            self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _writable(self) -> None:
        if self.readonly:
            raise PermissionError(f"{self.dir}: this RunStore was opened read-only")

    def done_ids(self) -> set[str]:
        """Ids already stored (failed items included: rerun with ``retry_failed`` to redo them)."""
        return set(self._rows)

    def rows(self) -> list[dict]:
        return list(self._rows.values())

    def append(self, rows: list[dict]) -> None:
        """Append rows and flush them to disk before returning."""
        self._writable()
        if not rows:
            return
        text = "".join(_line(r) for r in rows)  # all or nothing: a value JSON cannot hold raises before writing
        with open(self.predictions_path, "a", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        for r in rows:
            self._rows[r["id"]] = r

    def drop(self, ids: set[str]) -> None:
        """Forget rows (e.g. failed items to retry) by rewriting the file without them."""
        self._writable()
        keep = [r for r in self._rows.values() if r["id"] not in ids]
        write_text_atomic(self.predictions_path, "".join(_line(r) for r in keep))
        self._rows = {r["id"]: r for r in keep}

    def manifest(self) -> dict:
        p = self.manifest_path
        return json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}

    def update_manifest(self, **fields) -> dict:
        self._writable()
        m = self.manifest()
        m.update(fields)
        write_json_atomic(self.manifest_path, m)
        return m

    def write_metrics(self, metrics: dict) -> Path:
        self._writable()
        path = store_file(self.dir, METRICS, self.shard)
        write_json_atomic(path, metrics)
        return path
