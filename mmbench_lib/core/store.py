"""The run store: ``outputs/<run-id>/`` with predictions, manifest and metrics.

Predictions are appended and flushed per batch, one JSON object per line. Reopening a run
skips finished items and never duplicates them; a line cut off by an interrupted write is
dropped (that item is simply scored again). Metrics are computed only from this file.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

PREDICTIONS, MANIFEST, METRICS = "predictions.jsonl", "manifest.json", "metrics.json"


def write_json_atomic(path: Path, obj) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False, default=str)
        f.write("\n")
    os.replace(tmp, path)


def read_jsonl(path: Path) -> tuple[list[dict], int]:
    """Rows of a JSONL file and the byte length of its well-formed part."""
    rows, good = [], 0
    if not path.exists():
        return rows, 0
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:  # last line has no newline: cut off mid-write
            break
        line = data[pos:end].strip()
        if line:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                break
        pos = good = end + 1
    return rows, good


def shard_suffix(shard: tuple[int, int] | None) -> str:
    """``""`` for an unsharded run, ``".shard-02-of-08"`` for shard 2 of 8."""
    if not shard or shard[1] <= 1:
        return ""
    return f".shard-{shard[0]:02d}-of-{shard[1]:02d}"


class RunStore:
    """``shard=(index, count)`` gives each shard its own predictions and manifest file in the
    same folder (``predictions.shard-00-of-04.jsonl``), so shards never write to one file."""

    def __init__(self, run_dir: str | os.PathLike, shard: tuple[int, int] | None = None):
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.suffix = shard_suffix(shard)
        self.predictions_path = self.dir / f"predictions{self.suffix}.jsonl"
        self.manifest_path = self.dir / f"manifest{self.suffix}.json"
        rows, good = read_jsonl(self.predictions_path)
        if self.predictions_path.exists() and good < self.predictions_path.stat().st_size:
            with open(self.predictions_path, "r+b") as f:  # drop the torn tail
                f.truncate(good)
        self._rows = {}
        for r in rows:
            self._rows[r["id"]] = r

    def done_ids(self) -> set[str]:
        """Ids already stored (failed items included: rerun with ``retry_failed`` to redo them)."""
        return set(self._rows)

    def rows(self) -> list[dict]:
        return list(self._rows.values())

    def append(self, rows: list[dict]) -> None:
        """Append rows and flush them to disk before returning."""
        if not rows:
            return
        with open(self.predictions_path, "a", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
            f.flush()
            os.fsync(f.fileno())
        for r in rows:
            self._rows[r["id"]] = r

    def drop(self, ids: set[str]) -> None:
        """Forget rows (e.g. failed items to retry) by rewriting the file without them."""
        keep = [r for r in self._rows.values() if r["id"] not in ids]
        tmp = self.predictions_path.with_suffix(".jsonl.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for r in keep:
                f.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
        os.replace(tmp, self.predictions_path)
        self._rows = {r["id"]: r for r in keep}

    def manifest(self) -> dict:
        p = self.manifest_path
        return json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}

    def update_manifest(self, **fields) -> dict:
        m = self.manifest()
        m.update(fields)
        write_json_atomic(self.manifest_path, m)
        return m

    def write_metrics(self, metrics: dict) -> Path:
        path = self.dir / f"metrics{self.suffix}.json"
        write_json_atomic(path, metrics)
        return path
