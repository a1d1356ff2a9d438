"""Run directories under ``outputs/``, the one entry point ``evaluate(config)`` and notebook plumbing."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from mmbench_lib.core import manifest
from mmbench_lib.tasks._common import file_sha256
from mmbench_lib.pipeline.letters import generate_letters
from mmbench_lib.pipeline.ranking import rank_items, set_video_input
from mmbench_lib.core.datasource import describe as describe_data
from mmbench_lib.core.metrics import per_dimension, summarize
from mmbench_lib.models import load_adapter
from mmbench_lib.tasks.recipes import get_recipe
from mmbench_lib.core.paths import make_run_id, outputs_root, run_folder  # noqa: F401 - re-exported
from mmbench_lib.core.store import METRICS, SHARDS, RunStore, shard_dir, store_file, write_json_atomic
from mmbench_lib.pipeline.config import RunConfig
from mmbench_lib.pipeline.baselines import refusal
from mmbench_lib.pipeline.generation import evaluate_generation, label_for
from mmbench_lib.pipeline.ocr import OCRUnavailable
from mmbench_lib.pipeline.resume import check_same_run, identity
from mmbench_lib.pipeline.selection import check_same_selection
from mmbench_lib.pipeline.shards import merge_runs, select
from mmbench_lib.tasks.base import all_tasks, get_task
from mmbench_lib.tasks.base import load_items as task_items
from mmbench_lib.pipeline.backend import call_size, ranking_call_size, with_backend


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


def evaluate_ranking(config: RunConfig, adapter=None) -> dict:
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

    c = config
    torch.manual_seed(c.seed)
    items = select(c.select(load_items(c.benchmark, c.data)), c.shard_index, c.num_shards)
    recipe = get_recipe(c.recipe)
    recipe = recipe if recipe.generates else get_recipe(recipe, reduction=c.reduction)
    generation = {"max_new_tokens": c.max_new_tokens, "do_sample": False, "chat_template": recipe.chat} \
        if recipe.generates else None
    adapter = adapter or load_adapter(c.model, **c.adapter_options())
    video = set_video_input(adapter, c.video_input)
    store = RunStore(c.out_dir, shard=(c.shard_index, c.num_shards))
    now = identity({"benchmark": c.benchmark, "recipe": recipe.to_dict(), "generation": generation,
                    "options": c.option_settings(), "video_input": video})
    check_same_run(store, {**now, "model": adapter.name})
    if store.rows():
        check_same_selection(store.dir, store.manifest().get("config"), c.to_dict())
    task = get_task(c.benchmark)
    calls = None if recipe.generates else ranking_call_size(adapter, c)  # before describe(): the manifest has it
    image_output = ImageOutputScorer(ClipJudge(c.clip_model, c.clip_pretrained, device=getattr(adapter, "device", "cpu")),
                                     str(manifest.resolve(c.generated_dir)) if c.generated_dir else None)
    store.update_manifest(
        **manifest.base_manifest(c.parameters, c.seed), benchmark=c.benchmark, data=_json_native(c.data),
        data_sha256=data_hashes(c.data), model=adapter.describe(), recipe=recipe.to_dict(), n_items=len(items),
        **({"generation": generation} if generation else {}),
        image_output=image_output.describe() if any(it.needs_image_output for it in items) else None,
        shard={"index": c.shard_index, "count": c.num_shards, "item_ids": [it.id for it in items]} if c.num_shards > 1 else None,
        options=c.option_settings(), config=c.to_dict(), video_input=video,
    )
    if recipe.generates:
        adapter = with_backend(adapter, c)
        generate_letters(items, adapter, store, recipe, max_new_tokens=c.max_new_tokens, batch_size=call_size(adapter, c),
                         retry_failed=c.retry_failed, progress=c.progress)
    else:
        rank_items(items, adapter, store, recipe, batch_size=calls, retry_failed=c.retry_failed,
                   progress=c.progress, image_output=image_output)
    metrics = summarize([r for r in store.rows() if r["id"] in {it.id for it in items}], task.groups)
    metrics.update(model_name=c.model_name or None, data=describe_data(c.to_dict(), len(items), c.num_shards > 1))
    metrics.update(benchmark=c.benchmark, model=adapter.name, recipe=recipe.name, reduction=recipe.reduction,
                   video_input=video["used"])
    store.write_metrics(metrics)
    store.update_manifest(finished=manifest.now(), peak_memory=manifest.peak_memory())
    return metrics


def evaluate(config: RunConfig, adapter=None) -> dict:
    """Run ``config``: answer ranking for SEED v1 / SEED-2, generation for MMMU / CMMMU (the
    protocol comes from the benchmark's task module). ``adapter``: an already loaded model."""
    if config.protocol == "generation":
        return evaluate_generation(config, adapter)
    return evaluate_ranking(config, adapter)


def metrics_from_store(out_dir, benchmark: str) -> dict:
    """Recompute metrics from a run's predictions file alone."""
    store = RunStore(out_dir, readonly=True)
    return summarize(store.rows(), get_task(benchmark).groups)


def demo_args(benchmark: str, paths: dict, **filters) -> dict:
    """Loader keyword arguments for a demo set built by ``mmbench_lib.demo`` (the task's ``demo_args``)."""
    return get_task(benchmark).demo_args(paths, **filters)


#: parameter names of the evaluation notebooks, recorded in the manifest (with every ranking loader's arguments)
NOTEBOOK_PARAMETERS = {
    "run_id", "benchmark", "data_dir", "model", "recipe", "reduction", "scorer", "batch_size",
    "device", "limit", "seed", "generated_dir", "clip_model", "clip_pretrained", "shard_index", "num_shards", "blind_ids",
    "video_input", "dtype", "revision", "trust_remote_code", "device_map", "max_memory",
    *(p for t in all_tasks("ranking") for p in t.data_parameters() if p != "version"),
    "processor_kwargs", "system_prompt", "chat_template_kwargs", "stop_strings", "model_name",
}


def model_settings(device: str = "auto", dtype: str | None = "auto", revision: str | None = "",
                   trust_remote_code: bool = False, device_map=None, max_memory: dict | None = None,
                   processor_kwargs: dict | None = None, system_prompt: str = "", chat_template_kwargs: dict | None = None,
                   stop_strings: list | None = None) -> dict:
    """The model settings of a notebook's parameters as ``RunConfig`` / ``load_adapter`` keywords
    (empty strings and dicts mean "not given"; dtype "auto" is recorded as None, the default); the model-card
    settings (processor keywords, system prompt, chat-template keywords, stop strings) only when given."""
    card = {"processor_kwargs": processor_kwargs or {}, "system_prompt": system_prompt or None,
            "chat_template_kwargs": chat_template_kwargs or {}, "stop_strings": list(stop_strings or [])}
    return {"device": device, "dtype": None if dtype in ("", "auto") else dtype, "revision": revision or None,
            "trust_remote_code": trust_remote_code,
            "device_map": None if device_map in ("", "none", {}) else device_map, "max_memory": max_memory or None,
            **{k: v for k, v in card.items() if v}}


def loader_args(benchmark: str, annotation_file: str = "", demo: dict | None = None, **kw) -> dict:
    """Loader keyword arguments from notebook parameters: empty strings mean "not given";
    with no annotation file, the demo set's paths are used."""
    if not annotation_file:
        if demo is None:
            raise ValueError("give annotation_file, or a demo set to fall back on")
        return demo_args(benchmark, demo, **{k: v for k, v in kw.items() if k in ("dimensions", "level", "part")})
    task = get_task(benchmark)
    accepted = set(task.data_parameters())
    args = {"annotation_file": str(manifest.resolve(annotation_file))}
    for k, v in kw.items():
        if k in accepted and v not in ("", None, {}, []):
            if k in task.path_parameters:
                v = {s: str(manifest.resolve(p)) for s, p in v.items()} if isinstance(v, dict) else str(manifest.resolve(v))
            args[k] = v
    return args


__all__ = ["RunConfig", "evaluate", "evaluate_ranking", "evaluate_generation", "metrics_from_store", "run_dir",
           "make_run_id", "load_items", "demo_args", "merge_sub_runs", "loader_args", "NOTEBOOK_PARAMETERS", "per_dimension", "model_settings"]


#: the baselines MMMU §4.1 and CMMMU §4.1 report, in table order: Random Choice, Frequent Choice,
#: the text-only LLM (``none``: the model answers the text) and the LLM with OCR text of the images
PAPER_BASELINES = ("random", "frequent", "none", "ocr")


def evaluate_baselines(config: RunConfig, baselines=PAPER_BASELINES) -> dict[str, dict]:
    """``config`` once per baseline, each in ``config.out_dir/<label>`` (``random``, ``frequent``, the
    model's name, ``<model>+ocr``), the model loaded once and shared; a baseline whose OCR engine is
    not installed, or that the task refuses (``baselines.refusal``: Frequent Choice without a validation
    split), is skipped with the reason printed. Returns the metrics by label."""
    for b in [b for b in baselines if refusal(config.benchmark, b)]:
        print(f"skipped {label_for(config.model, b)}: {refusal(config.benchmark, b)}")
    baselines = [b for b in baselines if not refusal(config.benchmark, b)]
    needs_model = [b for b in baselines if b in ("none", "ocr")]
    llm = load_adapter(config.model, **config.adapter_options()) if needs_model else None
    results = {}
    for b in baselines:
        label = label_for(config.model, b)
        one = replace(config, out_dir=Path(config.out_dir) / label, baseline=b,
                      parameters={**config.parameters, "baseline": b})
        try:
            results[label] = evaluate(one, llm if b in needs_model else None)
        except OCRUnavailable as e:
            print(f"skipped {label}: {e}")
    if config.num_shards > 1:  # the shard's end (the launcher's mark of a finished shard): its sub-runs' counts
        shard = (config.shard_index, config.num_shards)
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
    for label in sorted(found, key=lambda k: (order.get(found[k]["config"].get("baseline"), len(order)), k)):
        config = RunConfig(**{**found[label]["config"], "out_dir": root / label, "shard_index": 0, "num_shards": 1})
        score = (lambda store, c=config: _score_merged(c, store)) if config.protocol == "generation" else None
        results[label] = merge_runs(sorted(root.glob(f"{SHARDS}/*/{label}")), root / label, config.benchmark, score=score)
    return results


def _score_merged(config: RunConfig, store: RunStore) -> dict:
    from mmbench_lib.pipeline.generation import load_items as generation_items, score_run

    items = config.select(generation_items(config.benchmark, config.source, config.split, config.subjects, config.cache_dir))
    _rows, metrics = score_run(items, store, use_random=config.use_random, mode=config.prompt_mode)
    man = store.manifest()
    metrics.update(model=(man.get("generation") or {}).get("model"), baseline=config.baseline,
                   label=label_for(config.model, config.baseline), max_new_tokens=config.max_new_tokens,
                   model_name=config.model_name or None, data=describe_data(config.to_dict(), len(items)))
    if man.get("ocr"):  # the LLM + OCR baseline: its reader as one process records it, tesseract calls summed
        label = Path(config.out_dir).name
        shard_metrics = sorted(Path(config.out_dir).parent.glob(f"{SHARDS}/*/{label}/metrics*.json"))
        calls = sum((json.loads(p.read_text(encoding="utf-8")).get("ocr") or {}).get("tesseract_calls_this_run", 0)
                    for p in shard_metrics)
        metrics["ocr"] = {**man["ocr"], "tesseract_calls_this_run": calls}
    store.write_metrics(metrics)
    return metrics
