"""Notebook parameters -> one ``RunSpec``: the one call after a notebook's (flat, readable) parameter cell.

The notebooks' conventions: an empty string, an empty dict and ``0`` (``max_new_tokens``, ``limit``) mean "not
given", ``dtype = "auto"`` is the default; with no ``annotation_file`` (ranking) or ``source`` (generation) the demo
set is used. :func:`run_data` builds the run's one data dict for either protocol, :func:`notebook_spec` the spec.
``reports.configs.base_config`` and the CLI's parameters go through the same two functions.
"""
from __future__ import annotations

from mmbench_lib.core import manifest
from mmbench_lib.pipeline.config import FLAT, PARTS, SURFACE, RunSpec
from mmbench_lib.tasks.base import get_task, is_task
from mmbench_lib.tasks.protocols import protocol_for

#: flat names whose notebook values reach the spec another way: the task's data (:func:`run_data`), the endpoint
NOT_DIRECT = ("benchmark", "endpoint", *(p.name for p in SURFACE if p.key.split(".")[0] == "data"))
#: notebook values that mean "not given" (the spec's default) besides the empty ones
UNSET = {"max_new_tokens": (0,), "dtype": ("auto",), "device_map": ("none",), "baseline": ("all",)}
_EMPTY = ("", None, {}, [])


def is_given(name: str, value) -> bool:
    return not any(value == e and type(value) is type(e) for e in (*_EMPTY, *UNSET.get(name, ())))


def data_names(benchmark: str) -> tuple[str, ...]:
    """The names a task's data mapping takes: a ranking task's loader arguments; a generation task's ``source``,
    ``split``, ``subjects``, ``cache_dir`` (and its loader's own names)."""
    task = get_task(benchmark)
    if protocol_for(benchmark).generates:
        return tuple(dict.fromkeys(("source", "split", "subjects", "cache_dir", *task.data_parameters())))
    return task.data_parameters()


def with_data(values: dict, name: str = "data", benchmark_name: str = "benchmark") -> dict:
    """``values`` with the mapping ``values[name]`` (a report notebook's one data parameter: the task's own names)
    spread into parameters of their own over the task's ``data_defaults``; a name the task does not take is a
    one-line ``ValueError`` (``data: seed takes no ['sourse']; it takes [...]``). Unchanged without the mapping."""
    data, benchmark = values.get(name), values.get(benchmark_name)
    if not isinstance(data, dict) or not benchmark or not isinstance(benchmark, str):
        return dict(values)
    if not is_task(benchmark):
        return {k: v for k, v in values.items() if k != name}
    names = data_names(benchmark)
    unknown = sorted(set(map(str, data)) - set(names))
    if unknown:
        raise ValueError(f"{name}: {benchmark} takes no {unknown}; it takes {list(names)}")
    return {**{k: v for k, v in values.items() if k != name}, **get_task(benchmark).data_defaults, **data}


def task_data(benchmark: str, data: dict, demo: dict | None = None) -> dict:
    """A task's run data from a report's data mapping (:func:`with_data`, then :func:`run_data`; the demo set when it
    names no data): a ranking task's loader arguments; a generation task's ``source``, ``split`` (None: the
    default), ``subjects`` (None: all) and ``cache_dir``."""
    values = with_data({"benchmark": benchmark, "data": data})
    out = run_data(benchmark, demo, **{k: values[k] for k in data_names(benchmark) if k in values and k != "split"})
    if protocol_for(benchmark).generates:
        out.update(split=values.get("split") or None, subjects=None if out["subjects"] in ("all", "") else out["subjects"])
    return out


def flat_params(values: dict) -> dict:
    """The flat ``RunSpec`` parameters of a notebook's ``values``: every flat name of the spec (``config.SURFACE``)
    given a value that is not empty (nor in :data:`UNSET`; of the run level only ``retry_failed``, which notebooks
    10, 11, 20 and 50-52 take), the endpoint options (:func:`endpoint_options`);
    ``clip_pretrained = ""`` means random CLIP weights (tests only). The data is :func:`run_data`'s."""
    flat = {}
    for p in SURFACE:
        if (p.part == "run" and p.name != "retry_failed") or p.name in NOT_DIRECT or p.name not in values:
            continue
        if p.name == "clip_pretrained" and values[p.name] == "":
            flat[p.name] = None
        elif is_given(p.name, values[p.name]):
            flat[p.name] = values[p.name]
    flat["endpoint"] = endpoint_options(values)
    return flat


def demo_args(benchmark: str, paths: dict, **filters) -> dict:
    """Loader keyword arguments for a demo set built by ``mmbench_lib.demo`` (the task's ``demo_args``)."""
    return get_task(benchmark).demo_args(paths, **filters)


#: the model settings a notebook shares between its runs (``load_adapter`` keywords too): the model part's fields
#: but the spec, its name, the engine and the video path, and the stop strings
SETTINGS = (*(p.name for p in SURFACE if p.part == "model" and p.key not in ("spec", "name", "engine_options", "video_input")),
            "stop_strings")


def model_settings(values: dict | None = None) -> dict:
    """The model settings of a notebook's parameters ``values`` (its globals may be given) as ``RunSpec.from_params``
    / ``load_adapter`` keywords: those given (:func:`flat_params`: empty strings and dicts, and dtype "auto", mean
    "not given", the default); none given: ``{}`` (every setting at its default)."""
    return {k: v for k, v in flat_params(values or {}).items() if k in SETTINGS}


def loader_args(benchmark: str, annotation_file: str = "", demo: dict | None = None, **kw) -> dict:
    """Loader keyword arguments from notebook parameters: empty strings mean "not given";
    with no annotation file, the demo set's paths are used."""
    if not annotation_file:
        if demo is None:
            raise ValueError("give annotation_file, or a demo set to fall back on")
        given = [k for k in get_task(benchmark).path_parameters if kw.get(k) not in ("", None, {}, [])]
        if given:  # never dropped without a word (preflight.check_data says the same before a run)
            raise ValueError(f"{given[0]} is given but annotation_file is empty: give the annotation_file it belongs to")
        return demo_args(benchmark, demo, **{k: v for k, v in kw.items() if k not in get_task(benchmark).path_parameters})
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
                           **{k: v for k, v in loader.items() if k in get_task(benchmark).data_parameters()})
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
    v = with_data(values)
    benchmark = fixed.pop("benchmark", v.get("benchmark"))
    data = run_data(benchmark, demo, **{k: v[k] for k in data_names(benchmark) if k in v and k != "split"})
    return RunSpec.from_params(benchmark, out, data=data, parameters=dict(parameters or {}), **{**flat_params(v), **fixed})


def check_parts(values: dict) -> None:
    """Build the parts of the spec that need no data (model, generation, selection, judges) from notebook
    parameters ``values``, so a wrong value is refused before the run folder exists (``preflight.check_values``):
    ``ValueError`` ``(parameter, "<part>.<field>: ...")`` naming the notebook parameter."""
    flat = flat_params(values)
    if "model" not in flat and isinstance(values.get("models"), list) and values["models"]:
        flat["model"] = values["models"][0]
    by_part: dict[str, dict] = {}
    for name, value in flat.items():
        part, key = FLAT.get(name, ("run", name))  # a run-level field (retry_failed) is checked by RunSpec itself
        if part not in ("task", "run"):
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


def surface_table() -> str:
    """The docs table of the flat parameters (docs/runs.md "The run spec"), derived from the spec's field metadata
    (``config.SURFACE``); ``tests/pipeline/test_surface.py`` keeps the docs equal to it."""
    rows = ["| flat parameter | part.field | type | `mmbench run` shortcut | what |", "|---|---|---|---|---|"]
    for p in SURFACE:
        flag = f"`--{p.name.replace('_', '-')}`" if p.cli else ""
        rows.append(f"| `{p.name}` | `{p.part}.{p.key}` | {p.type_name} | {flag} | {p.doc} |")
    return "\n".join(rows) + "\n"
