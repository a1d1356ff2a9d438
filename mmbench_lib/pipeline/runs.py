"""Run directories under ``outputs/`` and the high-level calls the notebooks make."""
from __future__ import annotations

import datetime as _dt
import os
import re
from pathlib import Path

from mmbench_lib import tasks as benchmarks
from mmbench_lib.core import manifest
from mmbench_lib.tasks._common import file_sha256
from mmbench_lib.pipeline.ranking import rank_items
from mmbench_lib.core.metrics import per_dimension, summarize
from mmbench_lib.models import load_adapter
from mmbench_lib.tasks.recipes import get_recipe
from mmbench_lib.core.paths import run_folder
from mmbench_lib.core.store import RunStore
from mmbench_lib.pipeline.shards import select


def outputs_root() -> Path:
    return manifest.resolve(os.environ.get("MMBENCH_OUTPUTS", "outputs"))


def make_run_id(label: str = "run") -> str:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    sha = (manifest.git_commit().get("commit") or "nogit")[:7]
    return f"{stamp}_{re.sub(r'[^A-Za-z0-9_.-]+', '-', label)}_{sha}"


def run_dir(run_id: str | None = None, label: str = "run") -> Path:
    """``outputs/<run_id>`` (created); a fresh id when none is given, the same folder to resume."""
    path = run_folder(outputs_root(), run_id or make_run_id(label))
    path.mkdir(parents=True, exist_ok=True)
    return path


def load_items(benchmark: str, data: dict):
    """Items of a benchmark from its loader's keyword arguments (paths, filters)."""
    return benchmarks.get(benchmark).load(**data)


def _json_native(value):
    """Loader arguments as JSON values (paths as strings, dicts and lists kept), so that a reader
    can call the loader again from the manifest (``mmbench_lib.analysis.reader.load_items``)."""
    if isinstance(value, dict):
        return {str(k): _json_native(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_native(v) for v in value]
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def data_hashes(data: dict) -> dict:
    return {k: file_sha256(v) for k, v in data.items() if isinstance(v, (str, Path)) and Path(v).is_file()}


def evaluate_ranking(benchmark: str, data: dict, model, out_dir, recipe="seed1-ppl", reduction: str | None = None,
                     batch_size: int = 8, device: str = "auto", scorer: str = "reference", limit: int | None = None,
                     seed: int = 0, parameters: dict | None = None, adapter_kwargs: dict | None = None,
                     progress: bool = True, generated_dir: str | None = None, clip_model: str = "ViT-L-14",
                     clip_pretrained: str | None = "openai", shard_index: int = 0, num_shards: int = 1) -> dict:
    """Load items, rank their choices with ``model``, store predictions, write and return metrics.

    Rerunning with the same ``out_dir`` resumes: finished items are not scored again.
    SEED-2 image-output items (dims 25-27) are scored with CLIP (``clip_model``/``clip_pretrained``)
    when the model outputs images or ``generated_dir`` holds images generated elsewhere.
    With ``num_shards > 1`` only this shard's items are scored, into their own files; metrics
    for the whole run come from ``mmbench merge`` (``mmbench_lib.pipeline.shards.merge_runs``).
    """
    from mmbench_lib.scoring.clip_judge import ClipJudge, ImageOutputScorer

    import torch

    torch.manual_seed(seed)
    items = load_items(benchmark, data)
    if limit:
        items = items[:limit]
    items = select(items, shard_index, num_shards)
    recipe = get_recipe(recipe, reduction=reduction)
    adapter = load_adapter(model, device=device, scorer=scorer, **(adapter_kwargs or {}))
    store = RunStore(out_dir, shard=(shard_index, num_shards))
    _check_same_run(store, benchmark, adapter, recipe)
    mod = benchmarks.get(benchmark)
    image_output = ImageOutputScorer(ClipJudge(clip_model, clip_pretrained, device=getattr(adapter, "device", "cpu")),
                                     str(manifest.resolve(generated_dir)) if generated_dir else None)
    store.update_manifest(
        **manifest.base_manifest(parameters, seed), benchmark=benchmark, data=_json_native(data),
        data_sha256=data_hashes(data), model=adapter.describe(), recipe=recipe.to_dict(), n_items=len(items),
        image_output=image_output.describe() if any(it.needs_image_output for it in items) else None,
        shard={"index": shard_index, "count": num_shards, "item_ids": [it.id for it in items]} if num_shards > 1 else None,
    )
    rank_items(items, adapter, store, recipe, batch_size=batch_size, progress=progress, image_output=image_output)
    metrics = summarize([r for r in store.rows() if r["id"] in {it.id for it in items}], mod.GROUPS)
    metrics.update(benchmark=benchmark, model=adapter.name, recipe=recipe.name, reduction=recipe.reduction)
    store.write_metrics(metrics)
    store.update_manifest(finished=manifest.now(), peak_memory=manifest.peak_memory())
    return metrics


def _check_same_run(store: RunStore, benchmark: str, adapter, recipe) -> None:
    """Resuming must not mix predictions of another model, benchmark or recipe in one store."""
    old = store.manifest()
    if not old or not store.rows():
        return
    was = (old.get("benchmark"), (old.get("model") or {}).get("name"), old.get("recipe"))
    now = (benchmark, adapter.name, recipe.to_dict())
    if was != now:
        raise ValueError(
            f"{store.dir} holds a run of benchmark {was[0]!r}, model {was[1]!r}, recipe {was[2]}; this call asks for "
            f"{now[0]!r}, {now[1]!r}, {now[2]}. Use another run_id, or the same settings to resume."
        )


def metrics_from_store(out_dir, benchmark: str) -> dict:
    """Recompute metrics from a run's predictions file alone."""
    store = RunStore(out_dir, readonly=True)
    return summarize(store.rows(), benchmarks.get(benchmark).GROUPS)


def dimension_table(runs: dict[str, dict]):
    """Per-dimension accuracy of several runs side by side (columns = run labels)."""
    import pandas as pd

    cols = {}
    base = None
    for label, m in runs.items():
        df = pd.DataFrame(m["per_dimension"]).set_index(["dimension_id", "dimension"])
        cols[label] = 100 * df["accuracy"].astype(float)  # metrics hold fractions; the table shows percent
        base = df if base is None else base
    table = pd.DataFrame(cols)
    table["n"] = base["n"]
    table["random (expected)"] = 100 * base["random_expected"].astype(float)
    return table.reset_index()


__all__ = ["evaluate_ranking", "metrics_from_store", "dimension_table", "run_dir", "make_run_id", "per_dimension"]


def group_table(runs: dict[tuple, dict]):
    """Group averages (micro and dimension-mean) of several runs, one row per (run..., group)."""
    import pandas as pd

    frames = []
    for key, m in runs.items():
        df = pd.DataFrame(m["groups"])
        if df.empty:
            continue
        key = key if isinstance(key, tuple) else (key,)
        for i, k in enumerate(key):
            df.insert(i, ["benchmark", "model", "run"][i] if len(key) <= 3 else f"key{i}", k)
        for c in ("accuracy", "accuracy_micro", "accuracy_dim_mean", "ci_low", "ci_high"):  # fractions -> percent
            if c in df:
                df[c] = 100 * df[c].astype(float)
        frames.append(df.drop(columns=["missing_dimensions", "accuracy"], errors="ignore"))  # accuracy = micro
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def save_table(df, out_dir, name: str) -> list[Path]:
    """Write a table as ``tables/<name>.csv`` and ``.md`` under the run folder."""
    folder = Path(out_dir) / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    csv, md = folder / f"{name}.csv", folder / f"{name}.md"
    df.to_csv(csv, index=False)
    md.write_text(df.to_markdown(index=False, floatfmt=".1f") + "\n", encoding="utf-8")
    return [csv, md]


def demo_args(benchmark: str, paths: dict, **filters) -> dict:
    """Loader keyword arguments for a demo set built by ``mmbench_lib.demo``."""
    d = paths[benchmark]
    if benchmark in ("seed", "seed1"):
        return {"annotation_file": d["annotation_file"], "image_root": d["image_root"],
                "video_roots": d["video_roots"], **{k: v for k, v in filters.items() if k == "dimensions"}}
    if benchmark == "seed2":
        return {"annotation_file": d["annotation_file"], "cc3m_dir": d["cc3m_dir"],
                "seed_bench_v2_dir": d["seed_bench_v2_dir"],
                **{k: v for k, v in filters.items() if k in ("level", "part", "version", "dimensions")}}
    raise ValueError(f"no demo set for {benchmark!r}")


#: parameter names of the evaluation notebooks, recorded in the manifest
NOTEBOOK_PARAMETERS = {
    "run_id", "benchmark", "data_dir", "annotation_file", "image_root", "video_roots", "frames_root", "dimensions",
    "cc3m_dir", "seed_bench_v2_dir", "level", "part", "model", "recipe", "reduction", "scorer", "batch_size",
    "device", "limit", "seed", "generated_dir", "clip_model", "clip_pretrained", "shard_index", "num_shards",
}


def loader_args(benchmark: str, annotation_file: str = "", demo: dict | None = None, **kw) -> dict:
    """Loader keyword arguments from notebook parameters: empty strings mean "not given";
    with no annotation file, the demo set's paths are used."""
    if not annotation_file:
        if demo is None:
            raise ValueError("give annotation_file, or a demo set to fall back on")
        return demo_args(benchmark, demo, **{k: v for k, v in kw.items() if k in ("dimensions", "level", "part")})
    mod = benchmarks.get(benchmark)
    import inspect

    accepted = set(inspect.signature(mod.load).parameters)
    args = {"annotation_file": str(manifest.resolve(annotation_file))}
    for k, v in kw.items():
        if k in accepted and v not in ("", None, {}, []):
            if k in PATH_ARGS:
                v = {s: str(manifest.resolve(p)) for s, p in v.items()} if isinstance(v, dict) else str(manifest.resolve(v))
            args[k] = v
    return args


PATH_ARGS = {"image_root", "video_roots", "frames_root", "cc3m_dir", "seed_bench_v2_dir"}
