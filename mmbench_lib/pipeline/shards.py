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

from mmbench_lib.core.datasource import describe as describe_data
from mmbench_lib.core.metrics import summarize
from mmbench_lib.core.record import changes, from_manifest
from mmbench_lib.core.store import RunStore, read_jsonl, write_json_atomic
from mmbench_lib.pipeline.selection import selection_change, selection_of
from mmbench_lib.tasks.base import canonical_name, get_task, is_task
from mmbench_lib.pipeline.config import RunSpec, identity_hash
from mmbench_lib.tasks.base import load_items

#: the model description's fields that decide its answers (not its placement: shards run on different GPUs)
MODEL_KEYS = ("adapter", "name", "scorer", "dtype", "seed", "revision", "append_eos")


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


def fingerprint(manifest: dict) -> dict:
    """What makes a shard part of one run, from its manifest read as a run record (``core.record``), in the order a
    difference is reported: what the run wrote it was made with (``RunRecord.made``: benchmark, model, recipe,
    generation settings, option order, video path; the model by :data:`MODEL_KEYS`, the recipe without its
    reduction, which follows), the item selection (``limit``, dimensions, subjects, split, level, part;
    ``mmbench_lib.pipeline.selection``), the data files' hashes (and a generation run's ``data_revision``), the shard
    count, and the run's ``identity`` (``RunSpec.identity``, hashed; runs since the spec). Shards merge only when
    these are equal."""
    rec = from_manifest(manifest)
    made = rec.made()
    recipe = made["recipe"]
    return {**made, "model": {k: v for k, v in rec.model.items() if k in MODEL_KEYS},
            "recipe": {k: v for k, v in recipe.items() if k != "reduction"} if isinstance(recipe, dict) else recipe,
            "reduction": recipe.get("reduction") if isinstance(recipe, dict) else None,
            "selection": selection_of(rec.params), "data_sha256": rec.data_sha256,
            "data_revision": rec.raw.get("data_revision"),  # generation: the data's hash or hub commit (equal: one copy)
            "num_shards": rec.shard.get("count", rec.raw.get("num_shards")),
            "identity": identity_hash(rec.spec_identity) if rec.spec_identity is not None else None}


def fingerprint_difference(a: dict, b: dict) -> str | None:
    """The first fingerprint field where two shards differ, as ``field: A vs B`` (``core.record.changes``, in the
    fingerprint's order); ``None`` if none."""
    found = changes(a, b, nested=False)
    return f"{found[0][0]}: {found[0][1]!r} vs {found[0][2]!r}" if found else None


def check_benchmark(given: str | None, recorded: str | None, where) -> None:
    """A ``--benchmark`` that names another benchmark than the run's (``mmbench metrics``, ``merge``) is
    refused: its groups over this run's rows would be another benchmark's numbers. Aliases of one task
    module (``seed`` / ``seed1``) are the same benchmark."""
    if not given or not recorded or given == recorded:
        return
    same = is_task(given) and is_task(recorded) and canonical_name(given) == canonical_name(recorded)
    if not same:
        raise ValueError(f"--benchmark {given}: {where} is a {recorded} run; its rows scored as {given} would "
                         f"mean nothing (leave out --benchmark)")


def recorded_benchmark(run_dir) -> str | None:
    """The benchmark a run folder's manifest (or its first shard manifest) records, if any."""
    for path in [Path(run_dir) / "manifest.json", *shard_manifests(run_dir)]:
        try:
            man = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(man, dict):
            return from_manifest(man).benchmark
    return None


def check_shard(mpath, idx, n, ids) -> None:
    """A shard manifest's number and items as :func:`select` makes them: ``0 <= index < count``, and every item id
    in the shard its id hashes to (a shard numbered 2-of-2, or one listing another shard's or made-up items, is
    refused naming the file)."""
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (idx, n))
    if not whole or n < 1 or not 0 <= idx < n:
        raise ValueError(f"{mpath}: shard {idx!r} of {n!r} does not exist (shards are numbered 0 to count - 1)")
    if not isinstance(ids, list):
        raise ValueError(f"{mpath}: shard item_ids is not a list")
    stray = [i for i in ids if shard_of(i, n) != idx]
    if stray:
        raise ValueError(f"{mpath}: {len(stray)} item(s) listed in shard {idx} of {n} belong to another shard by "
                         f"their id (e.g. {stray[0]!r} is shard {shard_of(stray[0], n)}): not this split's shard")


def task_golds(manifest: dict, where) -> dict | None:
    """The gold answer of every item the run asks, by id, from the task's own data as the shard manifest records it
    (loader arguments, selection and option order: ``RunSpec.from_manifest``); ``None`` for a manifest that
    records no data (made by hand, or before the data was recorded). Data that cannot be read is one line."""
    rec = from_manifest(manifest)
    if not rec.data and not rec.source:
        return None
    try:
        spec = RunSpec.from_manifest(manifest, shard_index=0, num_shards=1)
        items = spec.select(load_items(spec.benchmark, spec.task.load_args()))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{where}: cannot read the task's data to check the shards' gold answers "
                         f"({type(e).__name__}: {' '.join(str(e).split())})") from None
    return {it.id: json.loads(json.dumps(it.answer, default=str)) for it in items}  # as a stored row holds it


def check_golds(rows: dict, origin: dict, golds: dict | None) -> None:
    """Every row's ``answer`` is the task's gold (``task_golds``): a shard whose golds were edited, or that scored
    another copy of the data, is refused naming the shard file, the item and the field."""
    if golds is None:
        return
    for item_id, r in rows.items():
        if item_id not in golds:
            raise ValueError(f"{origin[item_id]}: item {item_id!r} is not in the task's data (field 'id')")
        if "answer" in r and r["answer"] != golds[item_id]:
            raise ValueError(f"{origin[item_id]}: item {item_id!r}, field 'answer': {r['answer']!r} but the task's gold "
                             f"is {golds[item_id]!r}; the shard was edited or scored other data: rerun that shard")


def rescore(rows: dict) -> int:
    """Each answered ranking row's ``correct`` (and ``text_correct``) recomputed from its prediction and answer, as
    the run scores them (``pipeline.ranking``); returns how many flags changed. A merge never counts a flag it did
    not check."""
    changed = 0
    for r in rows.values():
        if r.get("status", "ok") != "ok" or "answer" not in r or r["answer"] is None:  # None: withheld, not judged
            continue
        if "text_prediction" in r:
            text_ok = r["text_prediction"] is not None and r["text_prediction"] == r["answer"]
            changed += r.get("text_correct") != text_ok
            r["text_correct"] = text_ok
        ok = r.get("prediction") is not None and r.get("prediction") == r["answer"]
        changed += r.get("correct") != ok
        r["correct"] = ok
    return changed


def merge_runs(run_dirs, out_dir, benchmark: str | None = None, score=None) -> dict:
    """Merge the shard files found in ``run_dirs`` (and their ``shards/*/`` folders) into ``out_dir``:
    every shard 0..N-1 present, every expected item present exactly once (else ValueError naming what
    is wrong). Merging again (after the shards resumed with more items) adds only the rows not merged yet.

    Every shard must carry the fingerprint of shard 0 (:func:`fingerprint`): shards of another model,
    recipe, selection, data or split are refused naming the field; ``benchmark`` (``--benchmark``) must
    be the shards' own. Empty shards (more shards than items) are legal.
    ``score(store)``: the metrics of the merged store for a generation run (parsed and scored over all its
    items at once, ``pipeline.runs.merge_sub_runs``); by default the ranking summary."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: a file, not a folder (the merge writes predictions, manifest and metrics there)")
    shards, rows_by_id, dupes, expected, prints, origin = {}, {}, [], set(), {}, {}
    for d in map(Path, run_dirs):
        for mpath in shard_manifests(d):
            try:
                m = json.loads(mpath.read_text(encoding="utf-8"))
                rec = from_manifest(m)
                idx, n, ids = rec.shard["index"], rec.shard["count"], rec.shard["item_ids"]
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{mpath}: not a shard manifest ({type(e).__name__}: {e})") from None
            check_shard(mpath, idx, n, ids)
            if (idx, n) in shards:
                raise ValueError(f"shard {idx} of {n} appears twice: {shards[(idx, n)]} and {mpath}")
            shards[(idx, n)] = mpath
            prints[mpath] = fingerprint(m)
            expected |= set(ids)
            check_benchmark(benchmark, rec.benchmark, mpath)
            benchmark = benchmark or rec.benchmark
            ppath = mpath.with_name(mpath.name.replace("manifest", "predictions").replace(".json", ".jsonl"))
            rows, _ = read_jsonl(ppath)
            for r in rows:
                if r["id"] in rows_by_id:
                    dupes.append(r["id"])
                rows_by_id[r["id"]] = r
                origin[r["id"]] = ppath
    if not shards:
        raise ValueError(f"no shard manifests (manifest.shard-*-of-*.json) in {list(map(str, run_dirs))}")
    counts = {n for _, n in shards}
    if len(counts) != 1:
        raise ValueError(f"shards come from different splits: num_shards {sorted(counts)}")
    n = counts.pop()
    reference = shards.get((0, n)) or next(iter(shards.values()))
    for mpath, fp in prints.items():
        diff = fingerprint_difference(prints[reference], fp)
        if diff:
            raise ValueError(f"{mpath} and {reference} are shards of different runs ({diff}); merge the shards of one run")
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
    check_golds(rows_by_id, origin, task_golds(json.loads(reference.read_text(encoding="utf-8")), reference))
    rescored = 0 if score is not None else rescore(rows_by_id)  # generation: score() parses and scores them all
    held_manifest = out / "manifest.json"
    if held_manifest.is_file():
        try:
            previous = json.loads(held_manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = {}
        was, now = fingerprint(previous), prints[reference]
        before = from_manifest(previous)
        diff = before.raw.get("merged_from") and (
            fingerprint_difference({**was, "selection": None}, {**now, "selection": None})
            or (lambda c: c and f"selection {c[0]}: {c[1]!r} vs {c[2]!r}")(
                selection_change(before.params, from_manifest(json.loads(reference.read_text(encoding="utf-8"))).params)))
        if diff:
            raise ValueError(f"{out_dir} holds a merge of other shards ({diff}); merge into an empty folder")
    store = RunStore(out_dir)
    held = {r["id"]: r for r in store.rows()}  # an earlier merge of these shards (fewer items, or the same)
    if any(rows_by_id.get(i) != r for i, r in held.items()):
        raise ValueError(f"{out_dir} already holds predictions that are not these shards' rows; merge into an empty folder")
    store.append([r for i, r in rows_by_id.items() if i not in held])
    first = json.loads(shards[(0, n)].read_text(encoding="utf-8"))
    store.update_manifest(**{k: v for k, v in first.items() if k not in ("shard", "n_items")},
                          merged_from=[str(p) for p in shards.values()], num_shards=n, n_items=len(rows_by_id))
    if score is not None:
        metrics = score(store)
        write_json_atomic(Path(out_dir) / "merge.json", {"shards": n, "items": len(rows_by_id)})
        return metrics
    metrics_note = {"rescored": rescored} if rescored else {}
    metrics = summarize(store.rows(), get_task(benchmark).groups)
    counted = set(metrics)
    run = from_manifest(first)
    recipe = run.made()["recipe"] or {}
    metrics.update(benchmark=benchmark, model=run.model.get("name"), recipe=recipe.get("name"),
                   reduction=recipe.get("reduction"))
    # the run's labels (model, recipe, video_input, ...) as the shard run wrote them beside its counts, so
    # the merge carries every field a single-process run writes; the counts come from the merged rows
    shard_metrics = shards[(0, n)].with_name(shards[(0, n)].name.replace("manifest", "metrics"))
    if shard_metrics.is_file():
        metrics.update({k: v for k, v in json.loads(shard_metrics.read_text(encoding="utf-8")).items() if k not in counted})
    if "data" in metrics:  # a shard is "a subset"; the merged run is what one process would have scored
        metrics["data"] = describe_data(run.params or {"data": run.data}, len(rows_by_id))
    metrics.update(metrics_note)
    store.write_metrics(metrics)
    write_json_atomic(Path(out_dir) / "merge.json", {"shards": n, "items": len(rows_by_id), **metrics_note})
    return metrics
