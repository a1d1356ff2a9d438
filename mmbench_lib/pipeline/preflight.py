"""Checks of a run's parameter values that need no kernel, no data load and no model.

``check_values(values)`` takes a notebook's effective parameters (defaults plus the ones given) and
raises ``BadValue(name, why)`` for the first value that cannot work: a model spec that cannot be
resolved offline (unknown family, missing local folder, a hub id absent from the local Hugging Face
cache under ``HF_HUB_OFFLINE=1``), a split, subject (with a did-you-mean), dimension, level, part,
benchmark, baseline, device, dtype, device map, memory cap, data source or run folder that does not exist, and data
that is not what it should be (``check_data``: a cheap look at the layout, columns and first rows). It imports no
torch or transformers, so ``mmbench run`` refuses a mistake in about a second.

More: docs/modules.md, ``mmbench_lib/pipeline/preflight.py``.
"""
from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

from mmbench_lib.core.flags import is_bool
from mmbench_lib.core.manifest import resolve
from mmbench_lib.core.paths import find_run, outputs_root
from mmbench_lib.models import embedded
from mmbench_lib.models.placement import device_map_problem, max_memory_problem
from mmbench_lib.models import openai_compat
from mmbench_lib.models.registry import MODEL_REGISTRY, check_spec, generate_problem, is_served_name, rank_problem, split_spec
from mmbench_lib.pipeline.baselines import BASELINES, refusal
from mmbench_lib.pipeline.config import DEVICE_RE, DTYPES, ENDPOINT_KEYS, ModelSpec
from mmbench_lib.pipeline.params import check_parts, endpoint_options
from mmbench_lib.core.items import DataError
from mmbench_lib.tasks.base import all_tasks, get_task, is_task, task_names
from mmbench_lib.tasks.protocols import protocol_for
from mmbench_lib.tasks.recipes import RANKING_PROTOCOLS, RECIPES
from mmbench_lib.tasks.thinking import ranking_refusal

HUB_ID_RE = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")
TRUE = ("1", "on", "yes", "true")


class BadValue(ValueError):
    """A parameter value that cannot work; ``name`` is the parameter, the message says why."""

    def __init__(self, name: str, why: str):
        super().__init__(why)
        self.name = name


def offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) forbids downloads."""
    return any(os.environ.get(v, "").strip().lower() in TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def did_you_mean(value, known) -> str:
    close = difflib.get_close_matches(str(value), [str(k) for k in known], n=1, cutoff=0.6)
    if not close:
        close = difflib.get_close_matches(str(value).lower(), [str(k).lower() for k in known], n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _looks_like_path(target: str) -> bool:
    return target.startswith(("/", ".", "~")) or target.count("/") > 1 or "\\" in target or target.endswith("/")


def hub_cached(repo_id: str, revision: str | None = None, kind: str = "model") -> bool:
    """True when the local Hugging Face cache (``HF_HUB_CACHE``, ``HF_HOME``) holds ``repo_id``: a
    model's ``config.json`` at ``revision``; any snapshot or ``datasets`` cache entry of a dataset."""
    from huggingface_hub import constants, try_to_load_from_cache

    home = Path(os.environ.get("HF_HOME") or constants.HF_HOME)
    hub = Path(os.environ.get("HF_HUB_CACHE") or (home / "hub" if "HF_HOME" in os.environ else constants.HF_HUB_CACHE))
    if kind == "model":
        return isinstance(try_to_load_from_cache(repo_id, "config.json", cache_dir=hub, revision=revision or None), str)
    datasets_cache = Path(os.environ.get("HF_DATASETS_CACHE") or home / "datasets")
    wanted = repo_id.replace("/", "___").lower()
    return (hub / f"datasets--{repo_id.replace('/', '--')}").is_dir() or (
        datasets_cache.is_dir() and any(p.name.lower() == wanted for p in datasets_cache.iterdir()))


def hub_unreachable(timeout: float = 3.0) -> str | None:
    """Why the Hugging Face endpoint (``HF_ENDPOINT``, default huggingface.co) cannot be reached, or
    ``None`` when a TCP connection opens: one quick probe, so an uncached hub id on a machine without
    the network fails before the kernel starts, not after transformers' ~25 s of retries."""
    import socket
    from urllib.parse import urlsplit

    from huggingface_hub import constants

    url = urlsplit(os.environ.get("HF_ENDPOINT") or constants.ENDPOINT)
    host, port = url.hostname or "huggingface.co", url.port or (80 if url.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        return f"{host}:{port} unreachable ({e.strerror or e})"
    return None


def _not_cached(what: str, target: str, rev: str, fix: str) -> str | None:
    """The one-line reason an uncached hub id cannot load here, or ``None`` when it can be downloaded."""
    if offline():
        return f"{what} {target!r}{rev} is not in the local Hugging Face cache and HF_HUB_OFFLINE=1 forbids downloading it; {fix}"
    why = hub_unreachable()
    if why:
        return f"{what} {target!r}{rev} is not in the local Hugging Face cache and the hub is {why}; {fix}"
    return None


def check_model(spec, revision: str | None = None, name: str = "model") -> None:
    """A model spec that can load without the network, or ``BadValue`` saying why and what to do."""
    if not isinstance(spec, str):
        raise BadValue(name, "a model spec is a string such as 'smollm2' or 'vlm:<hub id or path>'")
    try:
        family = check_spec(spec)
    except ValueError as e:
        prefixes = [p for p in MODEL_REGISTRY if ":" not in spec]
        raise BadValue(name, f"{e}{did_you_mean(split_spec(spec)[0], prefixes or MODEL_REGISTRY)}") from None
    prefix, target = split_spec(spec)
    if prefix == "smollm2":
        try:
            embedded.gguf_path()
        except RuntimeError as e:
            raise BadValue(name, str(e)) from None
    if prefix == "random" and target and not target.lstrip("-").isdigit():
        raise BadValue(name, f"the seed after 'random:' must be an integer, e.g. random:0{did_you_mean(spec, ['random'])}")
    if family.endpoint or not family.needs_target:
        return
    local = resolve(target)
    if local.exists():
        if local.is_dir() and not (local / "config.json").is_file():
            raise BadValue(name, f"{local} has no config.json: not a transformers model folder")
        return
    if _looks_like_path(target) or not HUB_ID_RE.fullmatch(target):
        raise BadValue(name, f"no such model folder {str(local)!r}")
    if not hub_cached(target, revision):
        rev = f" at revision {revision!r}" if revision else ""
        cmd = f"hf download {target}" + (f" --revision {revision}" if revision else "")  # huggingface_hub's CLI
        why = _not_cached("hub id", target, rev, f"download it first ({cmd}) or give a local folder ({prefix}:/path/to/model)")
        if why:
            raise BadValue(name, why)


def check_benchmark(benchmark, protocol: str | None, name: str = "benchmark") -> None:
    """A registered benchmark (or alias), of the notebook's protocol (ranking or generation) when given."""
    if not is_task(benchmark):
        known = task_names(aliases=True)
        raise BadValue(name, f"unknown benchmark; use one of {known}{did_you_mean(benchmark, known)}")
    if protocol and get_task(benchmark).protocol != protocol:
        raise BadValue(name, f"this notebook evaluates {protocol} benchmarks {task_names(aliases=True, protocol=protocol)}")


def check_split(benchmark: str, split) -> None:
    """Empty (the benchmark's default split), a split of the benchmark or one of its aliases."""
    try:
        get_task(benchmark).check_split(split)
    except ValueError as e:
        raise BadValue("split", str(e)) from None


def check_subjects(benchmark: str, subjects) -> None:
    """``all``, or the names the task selects by (subjects, short keys, categories), with a did-you-mean."""
    try:
        get_task(benchmark).check_selection("subjects", subjects)
    except ValueError as e:
        raise BadValue("subjects", str(e)) from None


def check_dimensions(benchmark: str, dimensions) -> None:
    """``all``, the task's named selections (SEED v1: image, video) or dimension ids."""
    try:
        get_task(benchmark).check_selection("dimensions", dimensions)
    except ValueError as e:
        raise BadValue("dimensions", str(e)) from None


def check_choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise BadValue(name, f"use one of {list(allowed)}{did_you_mean(value, allowed)}")


def check_source(benchmark: str, source) -> None:
    """Empty (the demo set), an existing local folder, or a hub id the cache holds or the hub can serve."""
    if not source:
        return
    if resolve(source).exists():
        return
    if _looks_like_path(source) or source.count("/") != 1 or not HUB_ID_RE.fullmatch(source):
        raise BadValue("source", f"no such folder {str(resolve(source))!r}, and not a hub id such as "
                                 f"{get_task(benchmark).hub_id or 'owner/name'!r}")
    if not hub_cached(source, kind="dataset"):
        why = _not_cached("hub dataset", source, "", f"download it first (hf download {source} --repo-type dataset) "
                                                      "or give a local folder")
        if why:
            raise BadValue("source", why)


def check_data(benchmark: str, values: dict) -> None:
    """A cheap look at the data the run will read (the task's ``probe``: layout, columns, first rows),
    before the run folder exists: the task's ``data_key`` (``annotation_file`` for a ranking benchmark,
    ``source`` for a generation one). Empty means the demo set."""
    task = get_task(benchmark)
    name = task.data_key
    value = values.get(name)
    if not value:  # the demo set: a data path given beside it would be ignored, so it is refused with a word
        given = [p for p in task.path_parameters if p != name and values.get(p)]
        if given:
            raise BadValue(given[0], f"is given but {name} is empty, so the demo set would be read and {given[0]} "
                                     f"ignored; give the {name} it belongs to, or leave {given[0]} empty")
    if not value or not isinstance(value, str):
        return
    local = resolve(value)
    try:
        task.probe(str(local) if local.exists() or name == "annotation_file" else value, values.get("split") or None,
                   values)
    except DataError as e:
        raise BadValue(name, str(e)) from None


def run_folder_exists(ref) -> bool:
    """A run folder given as a path (absolute or from the repository root) or a run id under outputs/."""
    return bool(ref) and find_run(ref) is not None


def _check_runs(name: str, refs) -> None:
    for ref in [refs] if isinstance(refs, str) else refs or []:
        if not run_folder_exists(ref):
            raise BadValue(name, f"no run folder {ref!r} (neither a folder nor a run id under {outputs_root()})")


def check_placement(values: dict) -> None:
    """``device_map``: null, "auto" (or another accelerate strategy) or module -> device; ``max_memory``:
    null or device -> size, only with a device map; ``trust_remote_code``: a bool."""
    if "device_map" in values:
        why = device_map_problem(values["device_map"])
        if why:
            raise BadValue("device_map", why)
    if values.get("max_memory") not in (None, {}):
        why = max_memory_problem(values["max_memory"], values.get("device_map"))
        if why:
            raise BadValue("max_memory", why)
    if "trust_remote_code" in values and not is_bool(values["trust_remote_code"]):
        raise BadValue("trust_remote_code", f"use true or false (yes/no, 1/0), got {values['trust_remote_code']!r}")


def check_can_generate(values: dict) -> None:
    """A model that writes no text (``random``, ``models.registry.generate_problem``) asked to generate is refused
    before the run, naming each parameter that asks it to: a generation benchmark (``benchmark``,
    ``generation_benchmark``), a generated-letter ``recipe``, or generated-letter ``protocols`` of a report."""
    spec = values.get("model")
    why = isinstance(spec, str) and _uses_model(values) and generate_problem(spec)
    if not why:
        return
    asks = [f"{name} {values[name]!r}" for name in ("benchmark", "generation_benchmark")
            if is_task(values.get(name)) and protocol_for(values[name]).generates]
    if values.get("recipe") in RECIPES and RECIPES[values["recipe"]].generates:
        asks.append(f"recipe {values['recipe']!r}")
    if is_task(values.get("ranking_benchmark", "")) and isinstance(values.get("protocols"), list):
        task = get_task(values["ranking_benchmark"])  # its protocols (Task.ranking_protocols); empty: its defaults
        known = task.ranking_protocols or RANKING_PROTOCOLS
        keys = values["protocols"] or list(task.default_ranking_protocols)
        gen = [p for p in keys if p in known and RECIPES[known[p].recipe].generates]
        asks += [f"protocols {gen}"] if gen else []
    if asks:
        out = " (an empty generation_benchmark, protocols without gen-*)" if "ranking_benchmark" in values else ""
        raise BadValue("model", f"{why}; {' and '.join(asks)} need(s) text: use a model that generates, or leave "
                                f"them out{out}")


def check_can_rank(spec, benchmark, recipe, engine_options=None) -> None:
    """A ranking benchmark with a ranking recipe needs a model that gives log-likelihoods (the model
    registry's ``can_rank``, or an endpoint declared vLLM in ``engine_options``); ``BadValue`` naming the model
    otherwise."""
    if not isinstance(spec, str) or not is_task(benchmark) or protocol_for(benchmark).generates:
        return
    if isinstance(recipe, str) and recipe in RECIPES and RECIPES[recipe].generates:
        return
    why = rank_problem(spec, engine_options if isinstance(engine_options, dict) else None)
    if why:
        raise BadValue("model", why)


def check_engine_options(options, spec) -> None:
    """``engine_options`` (the served engines' options, docs/scale.md): the names and values the chosen engine
    declares (``config.ModelSpec``: e.g. ``max_retries >= 0``, a positive ``timeout``, an http(s) ``base_url``),
    and only for a served model."""
    if not options:
        return
    if not isinstance(options, dict):
        raise BadValue("engine_options", f"a mapping of option names to values, got {options!r}")
    unknown = sorted(set(options) - ENDPOINT_KEYS)
    if unknown:
        raise BadValue("engine_options", f"unknown option(s) {unknown}; known: {', '.join(sorted(ENDPOINT_KEYS))}")
    if not (isinstance(spec, str) and spec.startswith(("openai:", "vllm:"))):
        raise BadValue("engine_options", f"options of a served engine apply to vllm:<model> and openai:<model>, not {spec!r}")
    try:
        ModelSpec(spec=spec, engine_options=dict(options))
    except ValueError as e:
        raise BadValue("engine_options", str(e)) from None


#: notebook parameters that are endpoint options under another name (notebook 20's ``endpoint_url``, ...)
ENDPOINT_PARAMS = {"endpoint_url": "base_url", "concurrency": "concurrency", "api_key_env": "api_key_env"}


def check_endpoint(values: dict) -> None:
    """A served model's endpoint options (``engine_options`` and ``endpoint_url`` / ``concurrency`` /
    ``api_key_env``) through the client's one check, ``openai_compat.check_options``; ``BadValue`` naming the
    parameter."""
    if not (isinstance(values.get("model"), str) and values["model"].startswith(("openai:", "vllm:"))):
        return
    given = {k: values[p] for p, k in ENDPOINT_PARAMS.items() if values.get(p) not in (None, "")}
    opts = {**(values.get("engine_options") if isinstance(values.get("engine_options"), dict) else {}), **given}
    why = openai_compat.check_options(opts)
    if why:
        name = why.partition(":")[0]
        raise BadValue(next((p for p, k in ENDPOINT_PARAMS.items() if k == name and k in given), "engine_options"), why)


def check_order_matters(benchmark, recipe, permutations) -> None:
    """An option-order run (notebook 52's ``permutations``) of a content-ranking recipe is refused: it ranks
    each choice's text with no letter shown (docs/protocols.md §1.4), so no order can change its answer."""
    if permutations is None or not is_task(benchmark) or protocol_for(benchmark).generates:
        return
    if isinstance(recipe, str) and recipe in RECIPES and RECIPES[recipe].continuation == "content":
        raise BadValue("recipe", "ranks each choice's content with no letters (docs/protocols.md §1.4): the option order "
                                 "cannot change its answer, so every rotation would repeat the plain run; use a letter "
                                 "recipe (qwen-vl-letters) or a generated-letter one (lmms-eval-gen, vlmevalkit-gen)")


def _uses_model(values: dict) -> bool:
    return values.get("baseline", "none") not in ("random", "frequent")


def check_protocols(values: dict) -> None:
    """A report's ``protocols`` name protocols of its ``ranking_benchmark`` (``Task.ranking_protocols``)."""
    bench, keys = values.get("ranking_benchmark"), values.get("protocols")
    if not is_task(bench) or not isinstance(keys, list) or protocol_for(bench).generates:
        return
    known = get_task(bench).ranking_protocols
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise BadValue("protocols", f"{get_task(bench).title or bench} has no protocol {unknown[0]!r}; use some of "
                                    f"{list(known)}{did_you_mean(str(unknown[0]), known)}")


def check_values(values: dict, protocol: str | None = None) -> None:
    """Every known parameter of ``values`` (a notebook's effective parameters); ``protocol`` is the
    notebook's (from its default benchmark). Raises ``BadValue`` for the first that cannot work."""
    benchmarks = values.get("benchmarks") or ([values["benchmark"]] if "benchmark" in values else [])
    for b in benchmarks:
        check_benchmark(b, protocol, "benchmarks" if "benchmarks" in values else "benchmark")
    benchmark = benchmarks[0] if benchmarks else None
    why = benchmark is not None and is_task(benchmark) and ranking_refusal(get_task(benchmark).protocol,
                                                                            values.get("chat_template_kwargs"))
    if why:  # tasks/thinking.py: likelihood after a trace is not the papers' answer ranking
        raise BadValue("chat_template_kwargs", why)
    if "model" in values and _uses_model(values):
        check_model(values["model"], values.get("revision") or None)
        check_can_rank(values["model"], benchmark, values.get("recipe"), values.get("engine_options"))
        check_can_generate(values)
    for spec in values.get("models") or []:
        check_model(spec, values.get("revision") or None, name="models")
    if "engine_options" in values:
        check_engine_options(values["engine_options"], values.get("model"))
    check_protocols(values)
    check_endpoint(values)
    if benchmark is not None:
        why = is_task(benchmark) and values.get("baseline") in BASELINES and refusal(benchmark, values["baseline"])
        if why:
            raise BadValue("baseline", why)
        check_order_matters(benchmark, values.get("recipe"), values.get("permutations"))
        if "split" in values:
            check_split(benchmark, values["split"])
        if "subjects" in values:
            check_subjects(benchmark, values["subjects"])
        if "dimensions" in values:
            check_dimensions(benchmark, values["dimensions"])
        if "source" in values:
            check_source(benchmark, values["source"])
        check_data(benchmark, values)
    choices = {name: allowed for t in all_tasks() for name, allowed in t.parameter_choices.items()}
    choices.update({"baseline": ("all", *BASELINES), "papers": sorted({t.paper for t in all_tasks() if t.paper}),
                    "dtype": [d for d in DTYPES if d] + [""]})
    for name, allowed in choices.items():
        if name in values and values[name] is not None:
            check_choice(name, values[name], allowed)
    if isinstance(values.get("device"), str) and not DEVICE_RE.fullmatch(values["device"]):
        raise BadValue("device", "use auto, cpu, mps, cuda or cuda:<n>")
    if isinstance(values.get("device"), str):
        check_device(values["device"])
    check_placement(values)
    for name in ("runs", "compare_runs", "source_run"):
        if values.get(name):
            _check_runs(name, values[name])
    generated = values.get("generated_dir")
    if generated and generated != "demo" and not resolve(generated).is_dir():
        raise BadValue("generated_dir", f"no such folder {str(resolve(generated))!r}")
    try:  # every value the run spec's model, generation, selection and judges parts hold (config.RunSpec)
        check_parts(values)
    except ValueError as e:
        raise BadValue(*e.args) from None


# --------------------------------------------------------------------------- paths and devices
#: parameters naming a file or folder (dict values and list items too); ``source`` and model specs may
#: instead be hub ids, run references run ids under outputs/ (see ``absolute_paths``)
PATH_VALUES = ("data_dir", "annotation_file", "image_root", "video_roots", "frames_root", "cc3m_dir",
               "seed_bench_v2_dir", "generated_dir", "blind_ids", "responses", "annotations_dir", "gold")
MODEL_VALUES = ("model", "models", "blind_models")
RUN_VALUES = ("runs", "compare_runs", "source_run")
#: values that are names, not paths
NOT_PATHS = {"generated_dir": ("demo",)}


PATH_MAX = 4096  # bytes in a Linux path


def _absolute(value: str, cwd: Path) -> str:
    p = Path(value).expanduser()
    return str(p if p.is_absolute() else (cwd / p).absolute())


def _absolute_spec(spec, cwd: Path):
    """A model spec whose target is a local folder (it exists from ``cwd`` or looks like a path) made absolute; a
    served model name (``openai:<name>``) is the server's name and is sent as given."""
    if not isinstance(spec, str) or ":" not in spec:
        return spec
    prefix, target = spec.split(":", 1)
    if is_served_name(prefix):
        return spec
    if target and not Path(target).is_absolute() and (_looks_like_path(target) or (cwd / target).exists()):
        return f"{prefix}:{_absolute(target, cwd)}"
    return spec


def absolute_paths(params: dict, cwd: Path | str | None = None) -> dict:
    """``params`` with every relative path made absolute from ``cwd`` (the directory the command ran in): the one
    rule for relative paths on the command line and in ``-f`` files. A ``source`` or run reference that neither
    exists from ``cwd`` nor looks like a path stays as given (a hub id; a run id under outputs/); empty values,
    ``generated_dir: demo`` and absolute paths are unchanged."""
    cwd = Path(cwd or os.getcwd()).absolute()

    def one(name, v, maybe_name=False):
        if not isinstance(v, str) or not v or v in NOT_PATHS.get(name, ()) or len(v) > PATH_MAX or Path(v).is_absolute():
            return v  # (longer than a path can be: left as given, for the size check to name it)
        if maybe_name and not ((cwd / v).exists() or _looks_like_path(v)):
            return v
        return _absolute(v, cwd)

    def each(name, v, maybe_name=False):
        if isinstance(v, dict):
            return {k: one(name, x, maybe_name) for k, x in v.items()}
        if isinstance(v, list):
            return [one(name, x, maybe_name) for x in v]
        return one(name, v, maybe_name)

    out = dict(params)
    for name, value in params.items():  # a report notebook's data mapping (``data``, ``ranking_data``): the same rule
        if (name == "data" or name.endswith("_data")) and isinstance(value, dict):
            out[name] = absolute_paths(value, cwd)
    for name in PATH_VALUES:
        if name in out:
            out[name] = each(name, out[name])
    for name in ("source", *RUN_VALUES):
        if name in out:
            out[name] = each(name, out[name], maybe_name=True)
    for name in MODEL_VALUES:
        if name in out:
            out[name] = [_absolute_spec(s, cwd) for s in out[name]] if isinstance(out[name], list) \
                else _absolute_spec(out[name], cwd)
    return out


#: run in a fresh interpreter (the checks import no torch): prints the CUDA device count and MPS availability
_PROBE = "import torch; print(torch.cuda.device_count(), int(torch.backends.mps.is_available()))"


def _accelerators() -> tuple[int, bool]:
    """(CUDA devices, MPS available) as torch sees them, probed in a subprocess (a torch import costs seconds;
    only a run that names an accelerator pays it). No driver on the machine answers without the probe."""
    linux_gpu = any(Path(p).exists() for p in ("/proc/driver/nvidia", "/dev/nvidiactl", "/dev/kfd", "/dev/dxg"))
    if sys.platform.startswith("linux") and not linux_gpu:
        return 0, False
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120).stdout.split()
        return int(out[0]), bool(int(out[1]))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return 0, False


def check_device(device: str) -> None:
    """``cuda``, ``cuda:<n>`` or ``mps`` only on a machine that has it (``auto`` and ``cpu`` always pass)."""
    if device in ("auto", "cpu"):
        return
    cuda, mps = _accelerators()
    if device == "mps" and not mps:
        raise BadValue("device", "this machine has no Apple MPS device; use auto or cpu")
    if device.startswith("cuda"):
        index = int(device.partition(":")[2] or 0)
        if cuda == 0:
            raise BadValue("device", "this machine has no CUDA device torch can use; use auto or cpu")
        if index >= cuda:
            raise BadValue("device", f"this machine has {cuda} CUDA device(s), cuda:0 to cuda:{cuda - 1}")
