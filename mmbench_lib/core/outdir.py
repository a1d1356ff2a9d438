"""``--out`` folders: nothing a run wrote is ever overwritten.

``check_out(out, writes, suggest)`` is called by every command that writes into a folder it is given, before
any work. It refuses, in one line that names a fresh folder to write to instead:

- a file where the folder should be (or under it);
- a folder holding a run: a manifest or predictions file (plain or per shard), a ``shards/`` folder, a
  ``results.json``, or a sub-folder with a manifest (a report's sub-runs);
- a folder holding any file the command would write (``writes``: names or glob patterns).

``merge`` alone may write into a folder that holds an earlier merge of the same shards (its manifest has
``merged_from``; ``pipeline.shards.merge_runs`` checks the shards are the same and only adds rows) or into a
sharded run's own top folder before its first merge (nothing there is replaced).
"""
from __future__ import annotations

import json
from pathlib import Path

from mmbench_lib.core.store import MANIFEST, METRICS, PREDICTIONS, SHARDS

#: what marks a folder as a run's (a glob pattern each)
RUN_MARKERS = (MANIFEST, PREDICTIONS, METRICS, "manifest.shard-*-of-*.json", "predictions.shard-*-of-*.jsonl",
               "results.json", SHARDS, f"*/{MANIFEST}")


def run_marker(folder: Path) -> str | None:
    """The first thing in ``folder`` that marks it as a run folder (relative path), or ``None``."""
    for pattern in RUN_MARKERS:  # a folder where a store file belongs is the store's own one-line error
        hit = next((p for p in sorted(folder.glob(pattern)) if p.is_dir() == (pattern == SHARDS)), None)
        if hit is not None:
            return str(hit.relative_to(folder))
    return None


def fresh_folder(out: Path, suffix: str) -> Path:
    """``<out>-<suffix>`` beside ``out`` (``-2``, ``-3``, ... appended until it does not exist)."""
    base = out.with_name(f"{out.name}-{suffix}")
    candidate, k = base, 2
    while candidate.exists():
        candidate, k = base.with_name(f"{base.name}-{k}"), k + 1
    return candidate


def _merged(out: Path) -> bool:
    """``out`` holds a merge (its manifest names the shards it was merged from)."""
    try:
        return bool(json.loads((out / MANIFEST).read_text(encoding="utf-8")).get("merged_from"))
    except (OSError, ValueError, AttributeError):
        return False


def check_out(out, writes=(), suggest: str = "new", flag: str = "--out", merge: bool = False) -> Path:
    """``out`` as a ``Path`` if the command may write there, else a one-line ``ValueError`` (see module doc).
    ``writes``: the names (glob patterns) the command writes into ``out``; ``suggest``: the suffix of the
    folder proposed instead; ``merge``: the rules of ``mmbench merge``."""
    out = Path(out)
    for p in (out, *out.parents):
        if p.exists() or p.is_symlink():
            if not p.is_dir():
                raise ValueError(f"{flag} {out}: {p} is a file, not a folder")
            break
    if not out.is_dir():
        return out
    instead = f"write to a new folder instead, e.g. {flag} {fresh_folder(out, suggest)}"
    marker = run_marker(out)
    if merge and marker:
        if _merged(out):
            return out  # merging again: merge_runs refuses other shards and never rewrites a row
        if marker == SHARDS or ".shard-" in marker:  # a sharded run's folder before its first merge: nothing replaced
            return out
        raise ValueError(f"{flag} {out} holds a run ({marker}) that is not a merge of shards; merging there would "
                         f"replace its files: {instead}")
    if marker:
        raise ValueError(f"{flag} {out} holds a run ({marker}); writing there would replace its files: {instead}")
    for pattern in writes:
        hit = next(iter(sorted(out.glob(pattern))), None)
        if hit is not None:
            raise ValueError(f"{flag} {out} already holds {hit.name}, which this command would replace: {instead}")
    return out
