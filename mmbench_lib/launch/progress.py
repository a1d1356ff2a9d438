"""Live progress of the shards, read from each shard's own store (no shard reports anything).

Items done = lines of the shard's predictions file (the store writes one line per item and never
duplicates one), counted incrementally: only the bytes appended since the last look are read, and
a file rewritten (quarantine, retry of failed items) is counted again. Items in the shard = the
``item_ids`` of its manifest, written before its first item is scored.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from mmbench_lib.core.store import MANIFEST, PREDICTIONS, store_file


class _LineCounter:
    """Whole lines of one predictions file, counted incrementally."""

    def __init__(self, path: Path):
        self.predictions = path
        self._key, self._offset, self._lines = None, 0, 0

    def done(self) -> int:
        try:
            st = os.stat(self.predictions)
        except FileNotFoundError:
            self._key, self._offset, self._lines = None, 0, 0
            return 0
        if (st.st_dev, st.st_ino) != self._key or st.st_size < self._offset:
            self._key, self._offset, self._lines = (st.st_dev, st.st_ino), 0, 0
        with open(self.predictions, "rb") as f:
            f.seek(self._offset)
            chunk = f.read(st.st_size - self._offset)
        end = chunk.rfind(b"\n") + 1  # a line still being written is counted once it is whole
        self._lines += chunk[:end].count(b"\n")
        self._offset += end
        return self._lines


class ShardCounter:
    """Items done and items in one shard: its store, or the stores of its sub-runs (``<shard>/<label>/``,
    notebook 20's one run per baseline), summed."""

    def __init__(self, folder: Path, shard: tuple[int, int]):
        self.folder, self.shard = Path(folder), shard
        self.predictions = store_file(folder, PREDICTIONS, shard)
        self.manifest = store_file(folder, MANIFEST, shard)
        self._counters: dict[Path, _LineCounter] = {}
        self._totals: dict[Path, int] = {}

    def _stores(self) -> list[Path]:
        subs = sorted(p.parent for p in self.folder.glob(f"*/{self.manifest.name}"))
        return [self.folder, *subs]

    def done(self) -> int:
        n = 0
        for d in self._stores():
            path = store_file(d, PREDICTIONS, self.shard)
            n += self._counters.setdefault(path, _LineCounter(path)).done()
        return n

    def total(self) -> int | None:
        for d in self._stores():
            path = store_file(d, MANIFEST, self.shard)
            if path not in self._totals:
                try:
                    self._totals[path] = len(json.loads(path.read_text(encoding="utf-8"))["shard"]["item_ids"])
                except (OSError, ValueError, KeyError, TypeError):
                    continue
        return sum(self._totals.values()) if self._totals else None


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}"


#: seconds between two progress lines when nothing changed (a shard's kernel start and model load print nothing)
HEARTBEAT_S = 30.0


class ProgressLine:
    """One line over all shards, printed when something changed, and every ``HEARTBEAT_S`` seconds while nothing
    does: ``[0:01:12] 0-of-2 8/18 running ...``; a shard that has not yet listed its items (its kernel starts, its
    model loads) shows ``starting``."""

    def __init__(self, counters: dict[int, ShardCounter], num_shards: int, out):
        self.counters, self.n, self.out = counters, num_shards, out
        self.start, self.last, self.printed = time.monotonic(), None, None

    def update(self, states: dict[int, str], attempts: dict[int, int]) -> None:
        parts = []
        for k, counter in sorted(self.counters.items()):
            total = counter.total()
            state = "starting (kernel, model)" if total is None and states[k] == "running" else states[k]
            retry = f" (attempt {attempts[k]})" if attempts.get(k, 1) > 1 else ""
            parts.append(f"{k}-of-{self.n} {counter.done()}/{total if total is not None else '?'} {state}{retry}")
        line = " | ".join(parts)
        now = time.monotonic()
        if line != self.last or now - self.printed >= HEARTBEAT_S:
            self.last, self.printed = line, now
            self.out(f"[{_clock(now - self.start)}] shards {line}")
