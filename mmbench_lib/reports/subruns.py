"""A report notebook's sub-runs (one per protocol, blind model or option order) split into shards, merged,
and the report's own headline.

Sharded as notebooks 10, 11 and 20 are (``mmbench run NB --shards N``, :mod:`mmbench_lib.launch`): shard ``k``
makes its share of every sub-run in ``<run>/shards/<k>-of-<N>/<sub-run>/`` (``selection.shard_index`` /
``num_shards``: the same items in every sub-run, so an item's rotations or protocols land in one shard) and
stops; the merge joins each sub-run item-exactly (``pipeline.runs.merge_sub_runs``) into ``<run>/<sub-run>/``,
and the report is computed once, on the merged sub-runs. :func:`headline` writes the report's table into the
run's own ``results.json``, which ``mmbench run`` prints.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pandas as pd

from mmbench_lib.analysis import reader
from mmbench_lib.analysis import results as results_mod
from mmbench_lib.core import progress
from mmbench_lib.core.store import MANIFEST, METRICS, PREDICTIONS, SHARDS, store_file, write_json_atomic
from mmbench_lib.pipeline import runs
from mmbench_lib.core.record import from_manifest
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.pipeline.reuse import same_identity


def shard(config: RunSpec, shard_index: int = 0, num_shards: int = 1, merge_shards: bool = False) -> RunSpec:
    """``config`` for shard ``shard_index`` of ``num_shards`` (unchanged for an unsharded run and for the merge)."""
    if merge_shards or num_shards <= 1:
        return config.with_params(shard_index=0, num_shards=1)
    return config.with_params(shard_index=shard_index, num_shards=num_shards)


def is_shard(num_shards: int, merge_shards: bool) -> bool:
    """A shard's process: it makes its share of the sub-runs, the merge makes the report."""
    return num_shards > 1 and not merge_shards


def end_shard(out, shard_index: int, num_shards: int) -> None:
    """The shard's end (the launcher's mark of a finished shard, as ``runs.evaluate_baselines`` writes it):
    the rows each sub-run of the shard folder ``out`` stored; one line saying so."""
    key = (shard_index, num_shards)
    counts = {}
    folders = {p.name: p for p in sorted(Path(out).iterdir()) if store_file(p, MANIFEST, key).is_file()}
    for label, folder in folders.items():
        path = store_file(folder, PREDICTIONS, key)
        counts[str(label)] = sum(1 for _ in path.open(encoding="utf-8")) if path.is_file() else 0
    write_json_atomic(store_file(out, METRICS, key), {"sub_runs": counts})
    print(f"shard {shard_index} of {num_shards}: {sum(counts.values())} rows stored in {len(counts)} sub-run(s) "
          f"({', '.join(f'{k} {v}' for k, v in counts.items())}); the merge computes the report", flush=True)


def merge(out) -> list[str]:
    """Merge every sharded sub-run under ``out`` (``<out>/shards/<k>-of-<n>/<label>/``) into ``<out>/<label>/``
    (``runs.merge_sub_runs``: every item exactly once per sub-run); the labels merged (none when every sub-run
    was reused from ``outputs/``)."""
    if not any(Path(out).glob(f"{SHARDS}/*/*/{Path(MANIFEST).stem}.shard-*-of-*.json")):
        print("merge: no sharded sub-run (every sub-run was reused)", flush=True)
        return []
    merged = runs.merge_sub_runs(out)
    print(f"merged {len(merged)} sub-run(s): {', '.join(merged)}", flush=True)
    return list(merged)


def merged(folder) -> bool:
    """``folder`` holds the merge of a sharded sub-run (``merge.json`` beside its metrics)."""
    return (Path(folder) / "merge.json").is_file() and (Path(folder) / METRICS).is_file()


@contextlib.contextmanager
def step(text: str):
    """A report's long step named in every progress line inside it (``core.progress.context``)."""
    with progress.context(text):
        yield


def _cell(v):
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    return v.item() if hasattr(v, "item") else v


def headline(out, name: str, table: pd.DataFrame, notes: str = "", **details) -> dict:
    """The report's headline ``table`` (display values: percentages, counts) as the ``report`` section of
    ``<out>/results.json`` (beside the sub-runs' records, ``analysis.results``), which ``mmbench run`` prints
    at the end; ``details``: further JSON values (the report's own files hold the rest). Returns the body."""
    body = {"name": name, "columns": [str(c) for c in table.columns],
            "rows": [[_cell(v) for v in row] for row in table.astype(object).itertuples(index=False)],
            "notes": notes, **details}
    results_mod.write_results(out, report=body)
    return body


def show(out) -> None:
    """Print the report's headline as ``mmbench run`` prints it (from ``results.json``)."""
    print(results_mod.format_report(results_mod.read_results(out)), flush=True)


# ------------------------------------------------------------------------------ reuse of a stored run

def _finished_runs(root: Path):
    """``(folder, manifest)`` of every finished run under ``root`` (up to three levels deep)."""
    if not root.is_dir():
        return
    for depth in ("*", "*/*", "*/*/*"):
        for man_path in sorted(root.glob(f"{depth}/{MANIFEST}")):
            folder = man_path.parent
            try:
                man = reader.read_manifest(folder)
            except reader.RunError:
                continue
            if man.get("finished") and (folder / METRICS).is_file() and bool(from_manifest(man).params):
                yield folder, man


def covers(folder: Path, ids: list[str]) -> bool:
    """``folder``'s stored rows hold every item of ``ids``."""
    try:
        have = set(reader.samples_df(folder)["id"])
    except (reader.RunError, ValueError, KeyError):
        return False
    return set(ids) <= have


def find_same_run(config: RunSpec, ids: list[str], root: Path | None = None) -> Path | None:
    """The newest finished run in ``outputs/`` (``root``) that is the run ``config`` describes, its whole
    identity the same (``pipeline.reuse.same_identity``: model, recipe, option order, prompt mode, data,
    selection, ...), holding every item of ``ids``; or ``None``. Every report and notebook 40 reuse through it."""
    found = [folder for folder, man in _finished_runs(Path(root) if root else reader.outputs_root())
             if same_identity(man, config) and covers(folder, ids)]
    return max(found, key=lambda f: (f / METRICS).stat().st_mtime) if found else None
