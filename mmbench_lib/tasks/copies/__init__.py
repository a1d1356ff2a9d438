"""Every copy of a benchmark that users hold, read into the items the task modules produce.

- ``tables``: parquet / VLMEvalKit TSV / hub-cache reading shared by the copies;
- ``seed``: SEED v1 / SEED-2 hub parquet and TSV copies written once as the official layout; the
  official v1 frame folders (``v1_video/task<dim>/<source>_8_frame/<question_id>/``);
- ``mmmu``: MMMU / CMMMU merged hub parquet, cached hub ids and TSV copies, as rows.

``probe(benchmark, location, split)`` is the cheap look ``mmbench run`` takes before the run folder
exists: the layout, the columns and the first rows; a problem is one ``DataError`` line naming the
file, what was expected and what was found.
"""
from __future__ import annotations

from pathlib import Path

from mmbench_lib.core.items import DataError
from mmbench_lib.tasks.copies import mmmu as _mmmu
from mmbench_lib.tasks.copies import seed as _seed
from mmbench_lib.tasks.copies import tables

MMMU_NEEDED = ("id", "question", "options", "answer", "question_type")
CMMMU_JSONL_NEEDED = ("id", "type", "question", "subcategory")


def probe(benchmark: str, location, split: str | None = None, dims: dict | None = None) -> str:
    """The kind of copy ``location`` is (``official``, ``parquet``, ``tsv``, ``merged``, ``native``,
    ``hub``), after a cheap look at it; ``DataError`` when it cannot be read as ``benchmark``.
    ``dims``: the benchmark's dimension table (a SEED TSV's ``category`` is checked against it)."""
    if benchmark in ("seed", "seed1", "seed2"):
        return _seed.probe("seed2" if benchmark == "seed2" else "seed", location, dims)
    split = split or {"mmmu": "validation", "cmmmu": "val"}[benchmark]
    kind = _mmmu.probe(benchmark, location, split)
    if kind != "native":
        return kind
    folder = tables.local_source(location)
    if folder is None:
        return "hub"  # a hub id the datasets library serves (preflight checks the cache)
    return _probe_native(benchmark, Path(folder), split)


def _probe_native(benchmark: str, folder: Path, split: str) -> str:
    if benchmark == "mmmu":
        files = sorted(folder.glob(f"*/{split}-*.parquet"))
        if not files:
            raise DataError(str(folder), f"expected the MMMU per-subject layout (<Subject>/{split}-*.parquet), the merged "
                                         f"hub layout (data/{split}-*.parquet) or a VLMEvalKit TSV; found "
                                         f"{sorted(p.name for p in folder.iterdir())[:8]}")
        tables.require_columns(files[0], tables.parquet_columns(files[0]), MMMU_NEEDED, "the MMMU hub parquet")
        return "native"
    jsonl = sorted(folder.glob(f"cmmmu-data-{split}/*/*.jsonl")) or sorted(folder.glob("*/*.jsonl"))
    if jsonl:
        import json

        first = jsonl[0].read_text(encoding="utf-8").splitlines()[:1]
        try:
            rec = json.loads(first[0]) if first else {}
        except json.JSONDecodeError as e:
            raise DataError(str(jsonl[0]), f"expected JSON lines, found invalid JSON on line 1 ({e.msg})") from None
        tables.require_columns(jsonl[0], rec if isinstance(rec, dict) else {}, CMMMU_JSONL_NEEDED, "the CMMMU JSONL")
        return "native"
    files = sorted(folder.glob(f"*/{split}-*.parquet"))
    if not files:
        raise DataError(str(folder), f"expected the CMMMU official layout (cmmmu-data-{split}/<category>/<category>.jsonl), "
                                     f"the per-category hub layout (<category>/{split}-*.parquet), the merged hub layout "
                                     f"(data/{split}-*.parquet) or a VLMEvalKit TSV; found "
                                     f"{sorted(p.name for p in folder.iterdir())[:8]}")
    tables.require_columns(files[0], tables.parquet_columns(files[0]), CMMMU_JSONL_NEEDED, "the CMMMU hub parquet")
    return "native"
