"""What data a run scored, in words every results row and figure legend carries: ``demo data`` (its files are the
demo sets ``mmbench make-demo`` writes), ``full split``, or ``subset (n=...)`` (a ``limit``, a list of dimensions or
subjects, one shard of a sharded run); ``demo data, subset (n=...)`` for both."""
from __future__ import annotations

import json
from pathlib import Path

#: the file ``mmbench make-demo`` writes at the root of the demo sets (``mmbench_lib.demo``)
DEMO_STAMP = "paths.json"


def _paths(value):
    if isinstance(value, (str, Path)) and str(value).startswith(("/", "~")):
        yield Path(value).expanduser()
    elif isinstance(value, dict):
        for v in value.values():
            yield from _paths(v)


def is_demo(path) -> bool:
    """Whether ``path`` lies in the demo sets: a parent (up to four levels up) holds the demo's ``paths.json``."""
    for parent in list(Path(path).parents)[:4]:
        stamp = parent / DEMO_STAMP
        if stamp.is_file():
            try:
                return "paths" in json.loads(stamp.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return False
    return False


def describe(config: dict, n: int | None, one_shard: bool = False) -> str:
    """The data source of a run from its flat parameters (``RunSpec.params()``, ``config.run_params(manifest)``: ``data`` paths or ``source``, ``limit``,
    ``subjects``, ``data.dimensions``) and its number of items."""
    data = config.get("data") or {}
    demo = any(is_demo(p) for p in [*_paths(data), *_paths({"s": config.get("source")})])
    selection = [data.get("dimensions") if isinstance(data, dict) else None, config.get("subjects")]
    subset = bool(config.get("limit")) or any(isinstance(s, (list, tuple)) for s in selection) or one_shard
    label = "demo data" if demo else ("subset" if subset else "full split")
    if demo and subset:
        label += ", subset"
    return f"{label} (n={n})" if subset and n else label
