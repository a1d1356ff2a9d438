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


def describe(config: dict, n: int | None, one_shard: bool = False, declared: int | None = None) -> str:
    """The data source of a run from its flat parameters (``RunSpec.params()``, ``core.record.from_manifest(manifest).params``:
    ``data`` paths or ``source``, ``limit``, ``subjects``, ``data.dimensions``) and its number of distinct items.
    ``declared``: the split's published size (``Task.declared_size``; 0: none published): ``full split`` only when
    ``n`` equals it, otherwise ``subset (n=...)`` (fewer) or ``n=..., not the published ...`` (more); ``None``: not
    checked (``full split``)."""
    data = config.get("data") or {}
    demo = any(is_demo(p) for p in [*_paths(data), *_paths({"s": config.get("source")})])
    selection = [data.get("dimensions") if isinstance(data, dict) else None, config.get("subjects")]
    subset = bool(config.get("limit")) or any(isinstance(s, (list, tuple)) for s in selection) or one_shard
    if not demo and not subset and declared is not None and n != declared:
        if not declared:
            return f"n={n} (the split's size is not published)"
        if n and n > declared:
            return f"n={n}, not the published {declared}"
        subset = True
    label = "demo data" if demo else ("subset" if subset else "full split")
    if demo and subset:
        label += ", subset"
    return f"{label} (n={n})" if subset and n else label


#: the files whose bytes a local folder's revision covers (its images are named by these files)
DATA_SUFFIXES = (".json", ".jsonl", ".parquet", ".tsv", ".csv", ".arrow")


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _hub_cache() -> Path:
    import os

    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    return Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface")) / "hub"


def data_revision(source) -> dict | None:
    """Which revision of the data a run read, since datasets are fixed in place (MMMU-Benchmark/MMMU#83): a file's
    sha256; a folder's sha256 over its data files (:data:`DATA_SUFFIXES`, relative path and bytes, sorted); a hub id's
    commit from the local Hugging Face cache (``datasets--<org>--<name>/refs/main``). None when none can be told."""
    if not source:
        return None
    path = Path(str(source)).expanduser()
    if path.is_file():
        return {"kind": "file sha256", "value": _sha256(path)}
    if path.is_dir():
        import hashlib

        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in DATA_SUFFIXES)
        h = hashlib.sha256()
        for p in files:
            h.update(f"{p.relative_to(path).as_posix()}\0{_sha256(p)}\n".encode())
        return {"kind": f"sha256 of {len(files)} data files", "value": h.hexdigest()}
    ref = _hub_cache() / ("datasets--" + str(source).replace("/", "--")) / "refs" / "main"
    if ref.is_file():
        return {"kind": "hub commit", "value": ref.read_text(encoding="utf-8").strip(), "repo": str(source)}
    return None
