"""Notebook parameters -> one ``RunSpec``: the one call after a notebook's (flat, readable) parameter cell.

The notebooks' conventions: an empty string, an empty dict and ``0`` (``max_new_tokens``, ``limit``) mean "not
given", ``dtype = "auto"`` is the default; with no ``annotation_file`` (ranking) or ``source`` (generation) the demo
set is used. :func:`run_data` builds the run's one data dict for either protocol, :func:`notebook_spec` the spec.
``reports.configs.base_config`` and the CLI's parameters go through the same two functions.
"""
from __future__ import annotations

from mmbench_lib.core import manifest
from mmbench_lib.pipeline.config import FLAT, PARTS, RunSpec
from mmbench_lib.tasks.base import get_task
from mmbench_lib.tasks.protocols import protocol_for

#: notebook parameters that build a ranking task's data (its loader's arguments; ``runs.loader_args``)
RANKING_DATA = ("annotation_file", "image_root", "video_roots", "frames_root", "dimensions", "cc3m_dir",
                "seed_bench_v2_dir", "level", "part")
#: notebook parameters that are RunSpec parameters of the same name (empty: the spec's default)
DIRECT = ("model", "model_name", "recipe", "reduction", "scorer", "batch_size", "limit", "seed", "shard_index",
          "num_shards", "video_input", "backend", "batch_policy", "prompt_mode", "max_new_tokens", "split",
          "generated_dir", "clip_model", "clip_pretrained", "stop_strings", "ocr_lang", "ocr_psm")
#: the model settings (``runs.model_settings``)
SETTINGS = ("device", "dtype", "revision", "trust_remote_code", "device_map", "max_memory", "processor_kwargs",
            "system_prompt", "chat_template_kwargs")
_EMPTY = ("", None, {}, [])


def demo_args(benchmark: str, paths: dict, **filters) -> dict:
    """Loader keyword arguments for a demo set built by ``mmbench_lib.demo`` (the task's ``demo_args``)."""
    return get_task(benchmark).demo_args(paths, **filters)


def model_settings(device: str = "auto", dtype: str | None = "auto", revision: str | None = "",
                   trust_remote_code: bool = False, device_map=None, max_memory: dict | None = None,
                   processor_kwargs: dict | None = None, system_prompt: str = "", chat_template_kwargs: dict | None = None,
                   stop_strings: list | None = None) -> dict:
    """The model settings of a notebook's parameters as ``RunSpec.from_params`` / ``load_adapter`` keywords
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
        given = [k for k in get_task(benchmark).path_parameters if kw.get(k) not in ("", None, {}, [])]
        if given:  # never dropped without a word (preflight.check_data says the same before a run)
            raise ValueError(f"{given[0]} is given but annotation_file is empty: give the annotation_file it belongs to")
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


def run_data(benchmark: str, demo: dict | None = None, *, annotation_file: str = "", source: str = "",
             subjects="all", cache_dir=None, **loader) -> dict:
    """The run's one data dict from notebook parameters: a ranking task's loader arguments (``runs.loader_args``),
    a generation task's ``source`` (an existing local path made absolute; empty: the demo set's), ``subjects``
    and ``cache_dir``. ``demo``: the demo set's paths (``demo.ensure_demo``) to fall back on."""
    if not protocol_for(benchmark).generates:
        return loader_args(benchmark, annotation_file, demo=None if annotation_file else demo,
                           **{k: v for k, v in loader.items() if k in RANKING_DATA})
    data_source = str(manifest.resolve(source)) if source and manifest.resolve(source).exists() else source
    if not data_source:
        if demo is None:
            raise ValueError(f"{benchmark}: give source, or a demo set to fall back on")
        task = get_task(benchmark)
        data_source = demo[task.name][task.demo_source_key]
    return {"source": data_source, "subjects": subjects, "cache_dir": cache_dir or None}


def endpoint_options(values: dict) -> dict:
    """``model.engine_options`` from notebook parameters: ``engine_options``, and for a served model notebook 20's
    ``endpoint_url`` / ``api_key_env`` (openai: only) / ``concurrency`` under them."""
    model = values.get("model", "")
    options = {}
    if isinstance(model, str) and model.startswith(("openai:", "vllm:")):
        options = {"base_url": values.get("endpoint_url") or None, "concurrency": values.get("concurrency")}
        if model.startswith("openai:"):
            options["api_key_env"] = values.get("api_key_env")
    options.update(values.get("engine_options") or {})
    return {k: v for k, v in options.items() if v is not None}


def notebook_spec(values: dict, out, demo: dict | None = None, parameters: dict | None = None, **fixed) -> RunSpec:
    """The ``RunSpec`` of a notebook's parameters ``values`` (its globals may be given: unknown names are ignored)
    run in ``out``; ``fixed``: flat RunSpec parameters that win (e.g. ``baseline``); ``parameters``: what the
    manifest records as the caller's parameters."""
    v = dict(values)
    benchmark = fixed.pop("benchmark", v.get("benchmark"))
    data = run_data(benchmark, demo, **{k: v[k] for k in (*RANKING_DATA, "source", "subjects", "cache_dir") if k in v})
    flat = {k: v[k] for k in DIRECT if k in v and v[k] not in _EMPTY and not (k == "max_new_tokens" and v[k] == 0)}
    if v.get("clip_pretrained") == "":
        flat["clip_pretrained"] = None  # empty: random CLIP weights (tests only)
    flat.update(model_settings(**{k: v[k] for k in SETTINGS if k in v}))
    baseline = v.get("baseline")
    if baseline not in (None, "", "all"):
        flat["baseline"] = baseline
    if isinstance(v.get("retry_failed"), bool):  # the run's own field: False keeps a resumed run's failures
        flat["retry_failed"] = v["retry_failed"]
    return RunSpec.from_params(benchmark, out, data=data, endpoint=endpoint_options(v),
                               parameters=dict(parameters or {}), **{**flat, **fixed})


def check_parts(values: dict) -> None:
    """Build the parts of the spec that need no data (model, generation, selection, judges) from notebook
    parameters ``values``, so a wrong value is refused before the run folder exists (``preflight.check_values``):
    ``ValueError`` ``(parameter, "<part>.<field>: ...")`` naming the notebook parameter."""
    flat = {k: values[k] for k in DIRECT if k in values and values[k] not in _EMPTY
            and not (k == "max_new_tokens" and values[k] == 0)}
    flat.update(model_settings(**{k: values[k] for k in SETTINGS if k in values}))
    if values.get("baseline") not in (None, "", "all"):
        flat["baseline"] = values["baseline"]
    if "model" not in flat and isinstance(values.get("models"), list) and values["models"]:
        flat["model"] = values["models"][0]
    flat["endpoint"] = endpoint_options(values)
    by_part: dict[str, dict] = {}
    for name, value in flat.items():
        part, key = FLAT[name]
        if part != "task":
            by_part.setdefault(part, {})[key] = value
    for part, kw in by_part.items():
        try:
            PARTS[part](**kw)
        except (ValueError, TypeError) as e:
            field = str(e).split(":", 1)[0].split(".")
            name = next((n for n, (p, k) in FLAT.items() if p == field[0] and k == ".".join(field[1:2])), field[-1])
            if name == "endpoint":
                given = values.get("engine_options") or {}
                name = "engine_options" if field[-1] in given else {"base_url": "endpoint_url"}.get(field[-1], field[-1])
            raise ValueError(name, str(e)) from None
