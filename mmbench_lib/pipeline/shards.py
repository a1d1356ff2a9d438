"""Scale-out without a scheduler: a deterministic split of items into shards, and a merge that
checks every item is present exactly once before any metric is computed.

Each shard is an independent process (one per GPU: ``mmbench run ... --shards N`` submits them
through submitit, see :mod:`mmbench_lib.launch`, or plain parallel ``mmbench run ... -p shard_index K
-p num_shards N``); no process talks to another. A shard writes only in its own folder
``<run>/shards/<K>-of-<N>/`` (:func:`mmbench_lib.core.store.shard_dir`); the merge is the only join and
the only writer of the run's own names.
"""
from __future__ import annotations

import json
import zlib
from pathlib import Path

from mmbench_lib.tasks.base import get_task
from mmbench_lib.core.metrics import summarize
from mmbench_lib.core.store import RunStore, read_jsonl, write_json_atomic


def shard_of(item_id: str, num_shards: int) -> int:
    """The shard an item belongs to: a stable hash of its id (independent of item order)."""
    return zlib.crc32(str(item_id).encode("utf-8")) % num_shards


def select(items, shard_index: int = 0, num_shards: int = 1):
    if num_shards < 1 or not 0 <= shard_index < num_shards:
        raise ValueError(f"shard_index must be in [0, {num_shards}), got {shard_index}")
    if num_shards == 1:
        return list(items)
    return [it for it in items if shard_of(it.id, num_shards) == shard_index]


def shard_from_params(params: dict) -> tuple[int, int] | None:
    """``(shard_index, num_shards)`` of a shard's notebook parameters; ``None`` for an unsharded run
    and for the merge (``merge_shards``), which writes the run's own folder."""
    n = params.get("num_shards", 1)
    if params.get("merge_shards") or not isinstance(n, int) or n <= 1:
        return None
    return params.get("shard_index", 0), n


def shard_manifests(run_dir) -> list[Path]:
    """The shard manifests of a run: in its shard folders ``shards/*/`` and (older runs) in the folder."""
    d = Path(run_dir)
    return sorted(d.glob("manifest.shard-*-of-*.json")) + sorted(d.glob("shards/*/manifest.shard-*-of-*.json"))


def merge_runs(run_dirs, out_dir, benchmark: str | None = None) -> dict:
    """Merge the shard files found in ``run_dirs`` (and their ``shards/*/`` folders) into ``out_dir``:
    every shard 0..N-1 present, every expected item present exactly once (else ValueError naming what
    is wrong). Merging again (after the shards resumed with more items) adds only the rows not merged yet."""
    shards, rows_by_id, dupes, expected = {}, {}, [], set()
    for d in map(Path, run_dirs):
        for mpath in shard_manifests(d):
            m = json.loads(mpath.read_text(encoding="utf-8"))
            idx, n = m["shard"]["index"], m["shard"]["count"]
            if (idx, n) in shards:
                raise ValueError(f"shard {idx} of {n} appears twice: {shards[(idx, n)]} and {mpath}")
            shards[(idx, n)] = mpath
            expected |= set(m["shard"]["item_ids"])
            benchmark = benchmark or m.get("benchmark")
            rows, _ = read_jsonl(mpath.with_name(mpath.name.replace("manifest", "predictions").replace(".json", ".jsonl")))
            for r in rows:
                if r["id"] in rows_by_id:
                    dupes.append(r["id"])
                rows_by_id[r["id"]] = r
    if not shards:
        raise ValueError(f"no shard manifests (manifest.shard-*-of-*.json) in {list(map(str, run_dirs))}")
    counts = {n for _, n in shards}
    if len(counts) != 1:
        raise ValueError(f"shards come from different splits: num_shards {sorted(counts)}")
    n = counts.pop()
    missing_shards = sorted(set(range(n)) - {i for i, _ in shards})
    if missing_shards:
        raise ValueError(f"missing shard(s) {missing_shards} of {n}")
    if dupes:
        raise ValueError(f"{len(dupes)} item(s) appear in more than one shard, e.g. {dupes[:5]}")
    missing = sorted(expected - set(rows_by_id))
    if missing:
        raise ValueError(f"{len(missing)} item(s) not scored yet (rerun their shard to resume), e.g. {missing[:5]}")
    extra = sorted(set(rows_by_id) - expected)
    if extra:
        raise ValueError(f"{len(extra)} scored item(s) belong to no shard's item list, e.g. {extra[:5]}")
    store = RunStore(out_dir)
    held = {r["id"]: r for r in store.rows()}  # an earlier merge of these shards (fewer items, or the same)
    if any(rows_by_id.get(i) != r for i, r in held.items()):
        raise ValueError(f"{out_dir} already holds predictions that are not these shards' rows; merge into an empty folder")
    store.append([r for i, r in rows_by_id.items() if i not in held])
    first = json.loads(shards[(0, n)].read_text(encoding="utf-8"))
    store.update_manifest(**{k: v for k, v in first.items() if k != "shard"},
                          merged_from=[str(p) for p in shards.values()], num_shards=n)
    metrics = summarize(store.rows(), get_task(benchmark).groups)
    counted = set(metrics)
    metrics.update(benchmark=benchmark, model=first.get("model", {}).get("name"),
                   recipe=first.get("recipe", {}).get("name"), reduction=first.get("recipe", {}).get("reduction"))
    # the run's labels (model, recipe, video_input, ...) as the shard run wrote them beside its counts, so
    # the merge carries every field a single-process run writes; the counts come from the merged rows
    shard_metrics = shards[(0, n)].with_name(shards[(0, n)].name.replace("manifest", "metrics"))
    if shard_metrics.is_file():
        metrics.update({k: v for k, v in json.loads(shard_metrics.read_text(encoding="utf-8")).items() if k not in counted})
    store.write_metrics(metrics)
    write_json_atomic(Path(out_dir) / "merge.json", {"shards": n, "items": len(rows_by_id)})
    return metrics
