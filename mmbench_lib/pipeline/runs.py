"""Run directories under ``outputs/``, the one entry point ``evaluate(config)`` and notebook plumbing."""
from __future__ import annotations

import json
import time
from pathlib import Path

from mmbench_lib.core import manifest
from mmbench_lib.core.record import from_manifest
from mmbench_lib.tasks._common import file_sha256
from mmbench_lib.pipeline.letters import generate_letters
from mmbench_lib.pipeline.ranking import rank_items, set_video_input
from mmbench_lib.core.datasource import describe as describe_data
from mmbench_lib.core.metrics import per_dimension, summarize
from mmbench_lib.models import load_adapter
from mmbench_lib.tasks.recipes import get_recipe
from mmbench_lib.core.paths import make_run_id, outputs_root, run_folder  # noqa: F401 - re-exported
from mmbench_lib.core.store import METRICS, SHARDS, RunStore, shard_dir, store_file, write_json_atomic
from mmbench_lib.pipeline.config import FLAT, RunConfig, RunSpec
from mmbench_lib.pipeline.baselines import refusal
from mmbench_lib.pipeline.generation import evaluate_generation, label_for, run_fields
from mmbench_lib.pipeline.ocr import OCRUnavailable
from mmbench_lib.pipeline.resume import check_same_run, identity
from mmbench_lib.pipeline.selection import check_same_selection
from mmbench_lib.pipeline.shards import merge_runs, select
from mmbench_lib.tasks.base import all_tasks, get_task
from mmbench_lib.tasks.base import load_items as task_items
from mmbench_lib.pipeline.backend import call_size, ranking_call_size, with_backend
from mmbench_lib.pipeline.params import (demo_args, loader_args, model_settings, notebook_spec, run_data,  # noqa: F401
                                       task_data)  # (re-exported)


def run_dir(run_id: str | None = None, label: str = "run", shard: tuple[int, int] | None = None) -> Path:
    """``outputs/<run_id>`` (created); a fresh id when none is given, the same folder to resume.
    ``shard=(index, count)``: that shard's own folder ``outputs/<run_id>/shards/<index>-of-<count>/``."""
    path = shard_dir(run_folder(outputs_root(), run_id or make_run_id(label)), shard)
    path.mkdir(parents=True, exist_ok=True)
    return path


def load_items(benchmark: str, data: dict):
    """Items of a benchmark from its loader's keyword arguments (paths, filters): ``tasks.load_items``."""
    return task_items(benchmark, data)


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


def evaluate_ranking(config: RunSpec, adapter=None) -> dict:
    """Load items, rank their choices with the config's model (or ``adapter``), store predictions,
    write and return metrics.

    Rerunning with the same ``config.out_dir`` resumes: finished items are not scored again.
    SEED-2 image-output items (dims 25-27) are scored with CLIP (``clip_model``/``clip_pretrained``)
    when the model outputs images or ``generated_dir`` holds images generated elsewhere.
    With ``num_shards > 1`` only this shard's items are scored, into their own files; metrics
    for the whole run come from ``mmbench merge`` (``mmbench_lib.pipeline.shards.merge_runs``).
    A generated-letter recipe (``lmms-eval-gen``, ``vlmevalkit-gen``; not a paper protocol) generates
    up to ``max_new_tokens`` instead of ranking (``mmbench_lib.pipeline.letters``); ``reduction`` does
    not apply to it.
    """
    from mmbench_lib.scoring.clip_judge import ClipJudge, ImageOutputScorer

    import torch

    c, sel, data = config, config.selection, config.task.data
    torch.manual_seed(sel.seed)
    items = select(c.select(load_items(c.benchmark, data)), sel.shard_index, sel.num_shards)
    recipe = get_recipe(c.task.recipe)
    recipe = recipe if recipe.generates else get_recipe(recipe, reduction=c.generation.reduction)
    generation = {"max_new_tokens": c.generation.max_new_tokens, "do_sample": False, "chat_template": recipe.chat} \
        if recipe.generates else None
    adapter = adapter or load_adapter(c.model.spec, **c.adapter_options())
    video = set_video_input(adapter, c.model.video_input)
    store = RunStore(c.out_dir, shard=(sel.shard_index, sel.num_shards))
    now = identity({"benchmark": c.benchmark, "recipe": recipe.to_dict(), "generation": generation,
                    "options": c.option_settings(), "video_input": video})
    check_same_run(store, {**now, "model": adapter.name}, c.identity())
    if store.rows():
        check_same_selection(store.dir, from_manifest(store.manifest()).params, c.params())
    task, judges = get_task(c.benchmark), c.judges
    calls = None if recipe.generates else ranking_call_size(adapter, c)  # before describe(): the manifest has it
    image_output = ImageOutputScorer(ClipJudge(judges.clip_model, judges.clip_pretrained,
                                               device=getattr(adapter, "device", "cpu")),
                                     str(manifest.resolve(judges.generated_dir)) if judges.generated_dir else None)
    store.update_manifest(
        **manifest.base_manifest(c.parameters, sel.seed), benchmark=c.benchmark, data=_json_native(data),
        data_sha256=data_hashes(data), model=adapter.describe(), recipe=recipe.to_dict(), n_items=len(items),
        **({"generation": generation} if generation else {}),
        image_output=image_output.describe() if any(it.needs_image_output for it in items) else None,
        shard={"index": sel.shard_index, "count": sel.num_shards, "item_ids": [it.id for it in items]}
        if sel.num_shards > 1 else None,
        options=c.option_settings(), spec=c.to_dict(), identity=c.identity(), video_input=video,
    )
    if recipe.generates:
        adapter = with_backend(adapter, c)
        generate_letters(items, adapter, store, recipe, max_new_tokens=c.generation.max_new_tokens,
                         batch_size=call_size(adapter, c), retry_failed=c.retry_failed, progress=c.progress)
    else:
        rank_items(items, adapter, store, recipe, batch_size=calls, retry_failed=c.retry_failed,
                   progress=c.progress, image_output=image_output)
    rows = [r for r in store.rows() if r["id"] in {it.id for it in items}]
    metrics = summarize(rows, task.groups)
    if metrics.get("scored") is False:  # answers withheld (a test split): the server's file instead of accuracy
        try:
            metrics["submission"] = str(task.write_submission(items, {}, rows, store.dir))
        except NotImplementedError as e:
            metrics["submission"] = None
            metrics["submission_note"] = str(e)
    metrics.update(model_name=c.model.name or None, data=describe_data(c.params(), len({it.id for it in items}),
                                                                 sel.num_shards > 1, task.declared_size(None)))
    metrics.update(benchmark=c.benchmark, model=adapter.name, recipe=recipe.name, reduction=recipe.reduction,
                   video_input=video["used"])
    store.write_metrics(metrics)
    store.update_manifest(finished=manifest.now(), peak_memory=manifest.peak_memory())
    return metrics


def evaluate(config: RunSpec, adapter=None) -> dict:
    """Run ``config``: answer ranking for SEED v1 / SEED-2, generation for MMMU / CMMMU (the
    protocol comes from the benchmark's task module). ``adapter``: an already loaded model."""
    if config.generates:
        return evaluate_generation(config, adapter)
    return evaluate_ranking(config, adapter)


def metrics_from_store(out_dir, benchmark: str) -> dict:
    """Recompute metrics from a run's predictions file alone."""
    store = RunStore(out_dir, readonly=True)
    return summarize(store.rows(), get_task(benchmark).groups)


#: parameter names of the evaluation notebooks, recorded in the manifest: the spec's flat names (``config.FLAT``),
#: every ranking loader's arguments and the notebooks' own run id, demo folder and blind ids
NOTEBOOK_PARAMETERS = {"run_id", "data_dir", "blind_ids", *FLAT,
                       *(p for t in all_tasks("ranking") for p in t.data_parameters() if p != "version")}



__all__ = ["RunConfig", "RunSpec", "notebook_spec", "run_data", "evaluate", "evaluate_ranking", "evaluate_generation", "metrics_from_store", "run_dir",
           "make_run_id", "load_items", "demo_args", "merge_sub_runs", "loader_args", "NOTEBOOK_PARAMETERS", "per_dimension", "model_settings"]


#: the baselines MMMU §4.1 and CMMMU §4.1 report, in table order: Random Choice, Frequent Choice,
#: the text-only LLM (``none``: the model answers the text) and the LLM with OCR text of the images
PAPER_BASELINES = ("random", "frequent", "none", "ocr")


#: the model last loaded by :func:`shared_adapter` in this process: {load key: adapter}, one entry at most
_LOADED: dict[str, object] = {}


def shared_adapter(config: RunSpec):
    """The run's model (``load_adapter(model.spec, **adapter_options())``), loaded once per process for one spec and
    one set of load options: a notebook that runs several settings on one model (notebook 21's three settings x two
    prompts, notebook 50's two benchmarks) loads it once. Only the last model is kept (a different one replaces it,
    so memory holds one)."""
    return load_shared(config.model.spec, config.adapter_options())


def load_shared(spec: str, options: dict):
    """:func:`shared_adapter` for a spec and its ``load_adapter`` options."""
    key = json.dumps([spec, options], sort_keys=True, default=str)
    if key not in _LOADED:
        _LOADED.clear()
        started = time.perf_counter()
        _LOADED[key] = load_adapter(spec, **options)
        print(f"loaded model {spec} in {time.perf_counter() - started:.1f} s", flush=True)
    return _LOADED[key]


def evaluate_baselines(config: RunSpec, baselines=PAPER_BASELINES) -> dict[str, dict]:
    """``config`` once per baseline, each in ``config.out_dir/<label>`` (``random``, ``frequent``, the
    model's name, ``<model>+ocr``), the model loaded once and shared (:func:`shared_adapter`); a baseline whose OCR engine is
    not installed, or that the task refuses (``baselines.refusal``: Frequent Choice without a validation
    split), is skipped with the reason printed. Returns the metrics by label."""
    spec = config.model.spec
    for b in [b for b in baselines if refusal(config.benchmark, b)]:
        print(f"skipped {label_for(spec, b)}: {refusal(config.benchmark, b)}")
    baselines = [b for b in baselines if not refusal(config.benchmark, b)]
    needs_model = [b for b in baselines if b in ("none", "ocr")]
    llm = shared_adapter(config) if needs_model else None
    results = {}
    for b in baselines:
        label = label_for(spec, b)
        one = config.with_params(out_dir=Path(config.out_dir) / label, baseline=b,
                                 parameters={**config.parameters, "baseline": b})
        try:
            results[label] = evaluate(one, llm if b in needs_model else None)
        except OCRUnavailable as e:
            print(f"skipped {label}: {e}")
    if config.selection.num_shards > 1:  # the shard's end (the launcher's mark of a finished shard): its sub-runs' counts
        shard = (config.selection.shard_index, config.selection.num_shards)
        write_json_atomic(store_file(config.out_dir, METRICS, shard), {"sub_runs": {k: m["counts"] for k, m in results.items()}})
    return results


def merge_sub_runs(out_dir) -> dict[str, dict]:
    """Merge a sharded run made of sub-runs ``out_dir`` (``<run>/shards/<k>-of-<n>/<label>/``: notebook 20's one
    sub-run per baseline, as ``evaluate_baselines`` writes them) into ``<run>/<label>/``, sub-run by sub-run: the
    shards' rows checked and joined by ``shards.merge_runs``; a generation sub-run is then parsed and scored over
    all its items at once (``generation.score_run``), so the official random fallback is drawn in the same order
    as in one process. Returns the metrics by label, in the paper's baseline order."""
    root = Path(out_dir)
    found: dict[str, dict] = {}
    for m in sorted(root.glob(f"{SHARDS}/*/*/manifest.shard-*-of-*.json")):
        found.setdefault(m.parent.name, json.loads(m.read_text(encoding="utf-8")))
    if not found:
        raise ValueError(f"no shard sub-runs (shards/<k>-of-<n>/<label>/manifest.shard-*.json) under {root}")
    order = {b: i for i, b in enumerate(PAPER_BASELINES)}
    results = {}
    for label in sorted(found, key=lambda k: (order.get(from_manifest(found[k]).get("baseline"), len(order)), k)):
        config = RunSpec.from_manifest(found[label], out_dir=root / label, shard_index=0, num_shards=1)
        score = (lambda store, c=config: _score_merged(c, store)) if config.generates else None
        results[label] = merge_runs(sorted(root.glob(f"{SHARDS}/*/{label}")), root / label, config.benchmark, score=score)
    return results


def _score_merged(config: RunSpec, store: RunStore) -> dict:
    from mmbench_lib.pipeline.generation import score_run

    gen = config.generation
    items = config.select(load_items(config.benchmark, config.task.load_args()))
    _rows, metrics = score_run(items, store, use_random=gen.use_random, mode=config.task.prompt_mode)
    rec = from_manifest(store.manifest())
    metrics.update(run_fields(config, (rec.made().get("generation") or {}).get("model"), items))
    if rec.raw.get("ocr"):  # the LLM + OCR baseline: its reader as one process records it, tesseract calls summed
        label = Path(config.out_dir).name
        shard_metrics = sorted(Path(config.out_dir).parent.glob(f"{SHARDS}/*/{label}/metrics*.json"))
        calls = sum((json.loads(p.read_text(encoding="utf-8")).get("ocr") or {}).get("tesseract_calls_this_run", 0)
                    for p in shard_metrics)
        metrics["ocr"] = {**rec.raw["ocr"], "tesseract_calls_this_run": calls}
    store.write_metrics(metrics)
    return metrics
