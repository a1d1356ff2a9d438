"""One run spec in typed parts (as inspect_ai's ``EvalSpec``: task arguments, model arguments, a
``GenerateConfig``; lm-evaluation-harness' ``model_args`` checked where they are declared).

``RunSpec`` = ``task`` (:class:`TaskSpec`) + ``model`` (:class:`ModelSpec`) + ``generation``
(:class:`GenerationSpec`) + ``selection`` (:class:`SelectionSpec`) + ``judges`` (:class:`JudgeSpec`) + where the
run is written. :meth:`RunSpec.from_params` builds it from the flat parameters notebooks, the CLI and the reports
use (:data:`FLAT` maps each to its part); each part checks its values when built, before any data or model loads,
raising a one-line ``ValueError`` named ``<part>.<field>: ...``. :meth:`RunSpec.identity` is what decides what a
run computes (resume, merge and report reuse compare it); ``to_dict()`` is what the manifest records as ``spec``.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from mmbench_lib.core.secrets import check_parameters as check_no_credentials
from mmbench_lib.core.manifest import resolve
from mmbench_lib.tasks.base import get_task, task_names
from mmbench_lib.tasks.protocols import GENERATION, protocol_for
from mmbench_lib.models.openai_compat import check_options
from mmbench_lib.models.policy import BatchPolicy, policy_from
from mmbench_lib.models.placement import device_map_problem, max_memory_problem, memory_key
from mmbench_lib.models.registry import check_spec, rank_problem
from mmbench_lib.models.settings import ModelSettings
from mmbench_lib.pipeline.baselines import BASELINES
from mmbench_lib.scoring import REDUCTIONS, scorer_names
from mmbench_lib.tasks import options
from mmbench_lib.tasks.recipes import DEFAULT_RECIPE, RECIPES

DTYPES = (None, "auto", "float32", "float16", "bfloat16")
DEVICE_RE = re.compile(r"auto|cpu|mps|cuda(:\d+)?")
#: generation back-ends (``generation.backend``); "auto" picks from the model spec (``backend_name``)
BACKENDS = {
    "hf": "transformers' generate, one request at a time, no padding (the reference)",
    "batched": "the suite's batched generation under generation.batch_policy (mmbench_lib.models.batching)",
    "openai": "an OpenAI-compatible server (openai:<model>)",
    "vllm": "vLLM (vllm:<model>)",
}
#: the back-end a spec prefix implies; the in-process back-ends (hf, batched) take any other spec
SERVED = {"openai:": "openai", "vllm:": "vllm"}


def _number(low: float, strict: bool):
    def check(v):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or (v <= low if strict else v < low):
            return f"a number {'>' if strict else '>='} {low}, got {v!r}"
    return check


def _whole(low: int):
    def check(v):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            return f"a whole number >= {low}, got {v!r}"
    return check


def _of(*types, none: bool = True):
    def check(v):
        if (v is None and none) or (isinstance(v, types) and not (isinstance(v, bool) and bool not in types)):
            return None
        return f"expected {' or '.join(t.__name__ for t in types)}, got {type(v).__name__} {v!r}"
    return check


def _fraction(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1:
        return f"a fraction in (0, 1], got {v!r}"


def _strings(v):
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
        return f"a list of strings, got {v!r}"


def _client(v):
    return None  # the client's options are checked together by ``models.openai_compat.check_options``


#: the options ``models.openai_compat.OpenAIChat`` declares (openai: and, through it, vllm:); their values are
#: checked by the client's one check (``openai_compat.check_options``), called by ``ModelSpec``
CLIENT_OPTIONS = dict.fromkeys(("base_url", "api_key_env", "concurrency", "max_retries", "timeout", "backoff",
                                "max_backoff", "max_retry_after", "extra_body", "server", "tokenizer"), _client)
#: the options ``models.vllm.load_vllm`` declares besides the client's (``server`` is always "vllm" there)
VLLM_OPTIONS = {"tensor_parallel_size": _whole(1), "data_parallel_size": _whole(1), "gpu_memory_utilization": _fraction,
                "max_model_len": _whole(1), "kv_cache_memory_bytes": _whole(1), "enforce_eager": _of(bool, none=False),
                "start_timeout": _number(0, True), "server_args": _strings, "python": _of(str)}
#: engine -> its declared options (``model.engine_options``)
ENGINE_OPTIONS = {"openai:": CLIENT_OPTIONS, "vllm:": {**{k: v for k, v in CLIENT_OPTIONS.items() if k != "server"},
                                                       "server": _of(str), **VLLM_OPTIONS}}
ENDPOINT_KEYS = set(CLIENT_OPTIONS) | set(VLLM_OPTIONS)
#: engine options that change an answer (the others say where and how fast to ask): part of the identity
RESULT_OPTIONS = ("extra_body", "server", "tokenizer", "max_model_len")


def protocol_of(benchmark: str) -> str:
    """``"ranking"`` or ``"generation"``: the task's ``protocol``."""
    return get_task(benchmark).protocol


def _types(part: str, obj, table: dict) -> None:
    for name, ok in table.items():
        v = getattr(obj, name)
        if not isinstance(v, ok) or (isinstance(v, bool) and bool not in ok):
            names = " or ".join("None" if t is type(None) else t.__name__ for t in ok)
            raise ValueError(f"{part}.{name}: expected {names}, got {type(v).__name__} {v!r}")


def _known(where: str, value, known) -> None:
    if value not in known:
        raise ValueError(f"{where}: unknown value {value!r}; use one of {list(known)}")


def _set(obj, **values) -> None:
    for k, v in values.items():
        object.__setattr__(obj, k, v)


def _plain(v):
    if isinstance(v, Path):
        return str(v)
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


_NONE = type(None)


@dataclass(frozen=True)
class TaskSpec:
    """What is asked: the benchmark, its ONE data dict (ranking: the loader's keyword arguments; generation:
    ``source``, ``subjects``, ``cache_dir``; ``tasks.protocols.Protocol.check_data``), the split, the prompt mode
    (generation; ``tasks.modes``) and the recipe (ranking; ``tasks.recipes``)."""

    benchmark: str
    data: dict = field(default_factory=dict)
    split: str | None = None
    prompt_mode: str | None = "official"
    recipe: str = DEFAULT_RECIPE

    def __post_init__(self):
        _types("task", self, {"benchmark": (str,), "data": (dict,), "split": (str, _NONE), "prompt_mode": (str, _NONE),
                              "recipe": (str,)})
        _known("task.benchmark", self.benchmark.strip(), task_names(aliases=True))
        _set(self, benchmark=self.benchmark.strip())
        _known("task.recipe", self.recipe, sorted(RECIPES))
        task, protocol = get_task(self.benchmark), protocol_for(self.benchmark)
        data = dict(self.data)
        if protocol.generates:
            s = data.get("subjects")
            if not isinstance(s, (str, list, tuple, _NONE)):
                raise ValueError(f"task.data.subjects: expected str or list, got {type(s).__name__} {s!r}")
            data["subjects"] = None if s in ("all", "", [], ()) else [s] if isinstance(s, str) else list(s) if s else None
            for key in ("source", "cache_dir"):
                if not isinstance(data.get(key), (str, Path, _NONE)):
                    raise ValueError(f"task.data.{key}: expected str or Path, got {type(data[key]).__name__} {data[key]!r}")
            data.setdefault("source", None)
            data.setdefault("cache_dir", None)
        why = protocol.check_data(task, data)
        if why:
            raise ValueError(f"task.data.{why}" if why.startswith(protocol.required[0] + ":") else f"task.data: {why}")
        _set(self, data=data)
        if not protocol.generates:
            if self.prompt_mode not in (None, "", "official"):
                raise ValueError(f"task.prompt_mode: {self.prompt_mode!r} applies to generation benchmarks "
                                 f"({', '.join(task_names(protocol=GENERATION.name))}); a ranking run's protocol is its recipe")
            _set(self, prompt_mode="official")
            return
        split = task.resolve_split(self.split)
        _known("task.split", split, task.splits)
        try:
            split, mode = task.resolve_mode(split, self.prompt_mode)
        except ValueError as e:
            raise ValueError(f"task.prompt_mode: {e}") from None
        _set(self, split=split, prompt_mode=mode)

    def load_args(self) -> dict:
        """``tasks.load_items`` arguments: the data dict (generation: with the split)."""
        return {**self.data, "split": self.split} if protocol_for(self.benchmark).generates else dict(self.data)


@dataclass(frozen=True)
class ModelSpec:
    """Who answers: the model ``spec`` (``models.registry``), its display ``name``, placement, revision, the
    model-card settings (``models.settings``), how video items go in, and ``engine_options`` of a served
    engine, checked against the options ``openai:`` / ``vllm:`` declare (:data:`ENGINE_OPTIONS`)."""

    spec: str = "smollm2"
    name: str = ""  # display name in tables and figures (empty: from the spec; a local folder: its name)
    dtype: str | None = None
    device: str = "auto"  # one device; ignored when device_map is set
    device_map: str | dict | None = None  # None: one device; "auto": accelerate over the GPUs; or module -> device
    max_memory: dict | None = None  # with device_map: cap per device, e.g. {0: "38GiB", "cpu": "120GiB"}
    revision: str | None = None
    trust_remote_code: bool = False
    processor_kwargs: dict = field(default_factory=dict)  # e.g. {"max_pixels": 1003520}
    system_prompt: str | None = None
    chat_template_kwargs: dict = field(default_factory=dict)  # e.g. {"enable_thinking": False}
    engine_options: dict = field(default_factory=dict)
    video_input: str = "native"  # "native" (one clip through the processor's videos=) or "frames"

    def __post_init__(self):
        _types("model", self, {"spec": (str,), "name": (str,), "dtype": (str, _NONE), "device": (str,),
                               "device_map": (str, dict, _NONE), "max_memory": (dict, _NONE), "revision": (str, _NONE),
                               "trust_remote_code": (bool,), "processor_kwargs": (dict,), "system_prompt": (str, _NONE),
                               "chat_template_kwargs": (dict,), "engine_options": (dict,), "video_input": (str,)})
        _known("model.dtype", self.dtype, DTYPES)
        _known("model.video_input", self.video_input, ("native", "frames"))
        if not DEVICE_RE.fullmatch(self.device):
            raise ValueError(f"model.device: {self.device!r} is not auto, cpu, mps, cuda or cuda:<n>")
        for name, why in (("device_map", device_map_problem(self.device_map)),
                          ("max_memory", max_memory_problem(self.max_memory, self.device_map))):
            if why:
                raise ValueError(f"model.{name}: {why}")
        if self.max_memory:
            _set(self, max_memory={memory_key(k): v for k, v in self.max_memory.items()})
        self._check_engine_options()
        if self.served == "openai" and (self.processor_kwargs or self.system_prompt or self.chat_template_kwargs):
            raise ValueError("model.processor_kwargs/system_prompt/chat_template_kwargs: model settings apply to local "
                             "transformers models, not an openai: endpoint")

    @property
    def served(self) -> str | None:
        """The serving engine the spec names (``openai``, ``vllm``), or ``None`` for an in-process model."""
        return next((b for prefix, b in SERVED.items() if self.spec.startswith(prefix)), None)

    def _check_engine_options(self) -> None:
        if not self.engine_options:
            return
        check_no_credentials(self.engine_options, "model.engine_options")  # core.secrets: never stored
        declared = next((opts for prefix, opts in ENGINE_OPTIONS.items() if self.spec.startswith(prefix)), None)
        if declared is None:
            raise ValueError(f"model.engine_options: engine options apply only to openai:<model> and vllm:<model>, "
                             f"not {self.spec!r}")
        unknown = sorted(set(self.engine_options) - set(declared))
        if unknown:
            raise ValueError(f"model.engine_options: unknown option(s) {unknown} for {self.spec.split(':')[0]}:; "
                             f"known: {sorted(declared)}")
        why = check_options(self.engine_options)
        if why:
            raise ValueError(f"model.engine_options.{why}")
        for key, value in self.engine_options.items():
            why = declared[key](value)
            if why:
                raise ValueError(f"model.engine_options.{key}: {why}")


@dataclass(frozen=True)
class GenerationSpec:
    """How an answer is produced and read: the likelihood ``scorer`` and ``reduction`` (ranking), the cap of new
    tokens (``None``: the prompt mode's, else the protocol's, ``tasks.protocols``), stop strings, the generation
    ``backend`` and its ``batch_policy`` (``models.batching``), ``batch_size``, the ``baseline`` (generation: MMMU
    §4.1) and whether an unparseable answer draws the official random fallback (``use_random``)."""

    scorer: str = "shared-prefix"  # the notebooks' default (docs/engine.md); scores equal the reference's
    reduction: str | None = None
    max_new_tokens: int | None = None
    stop_strings: list | tuple = ()
    backend: str = "auto"
    batch_size: int = 8
    batch_policy: dict = field(default_factory=dict)
    baseline: str = "none"
    use_random: bool = True

    def __post_init__(self):
        _types("generation", self, {"scorer": (str,), "reduction": (str, _NONE), "max_new_tokens": (int, _NONE),
                                    "stop_strings": (list, tuple), "backend": (str,), "batch_size": (int,),
                                    "batch_policy": (dict,), "baseline": (str,), "use_random": (bool,)})
        _known("generation.scorer", self.scorer, scorer_names())
        _known("generation.reduction", self.reduction, (None, *REDUCTIONS))
        _known("generation.baseline", self.baseline, BASELINES)
        _known("generation.backend", self.backend, ("auto", *BACKENDS))
        for name, low in (("max_new_tokens", 1), ("batch_size", 1)):
            v = getattr(self, name)
            if v is not None and v < low:
                raise ValueError(f"generation.{name}: must be >= {low}, got {v}")
        if not all(isinstance(x, str) and x for x in self.stop_strings):
            raise ValueError(f"generation.stop_strings: expected non-empty strings, got {list(self.stop_strings)!r}")
        _set(self, stop_strings=list(self.stop_strings))
        try:
            policy_from(self.batch_policy)
        except ValueError as e:
            raise ValueError(f"generation.batch_policy: {e}") from None


@dataclass(frozen=True)
class SelectionSpec:
    """Which items, in which option order: the first ``limit`` (0/None: all), this process' shard, the seed,
    and the option order of lettered multiple choice (``tasks.options``; CircularEval, one run per order)."""

    limit: int | None = None
    seed: int = 0
    shard_index: int = 0
    num_shards: int = 1
    rotation: int = 0  # cyclic shift k of each item's options; k > 0 keeps the items with more than k options
    permutation_seed: int | None = None  # instead: the options shuffled by a seed (per item id)
    lettered_only: bool = False  # keep only multiple-choice items answered by letter (implied by the two above)

    def __post_init__(self):
        _types("selection", self, {"limit": (int, _NONE), "seed": (int,), "shard_index": (int,), "num_shards": (int,),
                                   "rotation": (int,), "permutation_seed": (int, _NONE), "lettered_only": (bool,)})
        for name, low in (("num_shards", 1), ("limit", 0), ("seed", 0), ("rotation", 0), ("permutation_seed", 0)):
            v = getattr(self, name)
            if v is not None and v < low:
                raise ValueError(f"selection.{name}: must be >= {low}, got {v}")
        if self.limit == 0:
            _set(self, limit=None)  # 0 means all items, as the notebooks' parameter does
        if self.rotation and self.permutation_seed is not None:
            raise ValueError("selection.rotation: give a rotation or a permutation_seed, not both")
        if not 0 <= self.shard_index < self.num_shards:
            raise ValueError(f"selection.shard_index: must be in [0, {self.num_shards}), got {self.shard_index}")

    def option_settings(self) -> dict | None:
        """The option-order settings when any is set (the manifest's ``options``), else ``None``."""
        if not (self.rotation or self.permutation_seed is not None or self.lettered_only):
            return None
        return {"rotation": self.rotation, "permutation_seed": self.permutation_seed, "lettered_only": True}


@dataclass(frozen=True)
class JudgeSpec:
    """The judges: the CLIP model scoring SEED-2's image outputs (dims 25-27, with images from ``generated_dir``)
    and tesseract's language and page segmentation mode for the LLM + OCR baseline."""

    clip_model: str = "ViT-L-14"
    clip_pretrained: str | None = "openai"
    generated_dir: str | Path | None = None
    ocr_lang: str | None = None
    ocr_psm: int | None = None

    def __post_init__(self):
        _types("judges", self, {"clip_model": (str,), "clip_pretrained": (str, _NONE), "generated_dir": (str, Path, _NONE),
                                "ocr_lang": (str, _NONE), "ocr_psm": (int, _NONE)})
        if self.ocr_psm is not None and not 0 <= self.ocr_psm <= 13:
            raise ValueError(f"judges.ocr_psm: tesseract page segmentation modes are 0-13, got {self.ocr_psm}")


PARTS = {"task": TaskSpec, "model": ModelSpec, "generation": GenerationSpec, "selection": SelectionSpec,
         "judges": JudgeSpec}
#: the run's own fields: where it is written and how it reports (never part of the identity)
RUN_FIELDS = ("out_dir", "progress", "retry_failed", "parameters")
#: flat parameter -> (part, field); generation's source/subjects/cache_dir are keys of ``task.data``
FLAT: dict[str, tuple[str, str]] = {
    "benchmark": ("task", "benchmark"), "data": ("task", "data"), "split": ("task", "split"),
    "prompt_mode": ("task", "prompt_mode"), "recipe": ("task", "recipe"),
    "source": ("task", "data.source"), "subjects": ("task", "data.subjects"), "cache_dir": ("task", "data.cache_dir"),
    "model": ("model", "spec"), "model_name": ("model", "name"), "endpoint": ("model", "engine_options"),
    **{f: ("model", f) for f in ("dtype", "device", "device_map", "max_memory", "revision", "trust_remote_code",
                                 "processor_kwargs", "system_prompt", "chat_template_kwargs", "video_input")},
    **{f.name: ("generation", f.name) for f in fields(GenerationSpec)},
    **{f.name: ("selection", f.name) for f in fields(SelectionSpec)},
    **{f.name: ("judges", f.name) for f in fields(JudgeSpec)},
}


@dataclass(frozen=True)
class RunSpec:
    """One evaluation run: its five parts, where it is written (``out_dir``), whether it prints progress,
    retries failed items, and the caller's own ``parameters`` (recorded as given)."""

    task: TaskSpec
    out_dir: str | Path
    model: ModelSpec = field(default_factory=ModelSpec)
    generation: GenerationSpec = field(default_factory=GenerationSpec)
    selection: SelectionSpec = field(default_factory=SelectionSpec)
    judges: JudgeSpec = field(default_factory=JudgeSpec)
    progress: bool = True
    retry_failed: bool = True  # a resumed run asks its failed items again (False keeps them failed)
    parameters: dict = field(default_factory=dict)

    # ----------------------------------------------------------------------------------------- building
    @classmethod
    def from_params(cls, benchmark: str | None = None, out_dir: str | Path | None = None, **params) -> RunSpec:
        """The spec of flat parameters (the names of :data:`FLAT` and the run's own fields); an unknown name is a
        ``ValueError`` naming it."""
        params = {**({"benchmark": benchmark} if benchmark is not None else {}),
                  **({"out_dir": out_dir} if out_dir is not None else {}), **params}
        unknown = sorted(set(params) - set(FLAT) - set(RUN_FIELDS))
        if unknown:
            raise ValueError(f"run: unknown parameter(s) {unknown}; known: {sorted({*FLAT, *RUN_FIELDS})}")
        if "benchmark" not in params or "out_dir" not in params:
            raise ValueError(f"run: give {'benchmark' if 'benchmark' not in params else 'out_dir'}")
        parts: dict[str, dict] = {p: {} for p in PARTS}
        data, sourced = dict(params.get("data") or {}), {}
        for name, value in params.items():
            if name in FLAT and name != "data":
                part, key = FLAT[name]
                if key.startswith("data."):
                    sourced[key[5:]] = value
                else:
                    parts[part][key] = value
        benchmark = params["benchmark"]
        if isinstance(benchmark, str) and benchmark.strip() in task_names(aliases=True) \
                and protocol_for(benchmark.strip()).generates:
            data.update(sourced)
        elif any(v is not None for v in sourced.values()):  # a ranking run (or an unknown benchmark, refused next)
            data.update({k: v for k, v in sourced.items() if v is not None})
        parts["task"]["data"] = data
        run = {k: params[k] for k in RUN_FIELDS if k in params}
        return cls(**{p: PARTS[p](**kw) for p, kw in parts.items()}, **run)

    def __post_init__(self):
        for name, kind in PARTS.items():
            if not isinstance(getattr(self, name), kind):
                raise ValueError(f"run.{name}: expected {kind.__name__}, got {type(getattr(self, name)).__name__}")
        _types("run", self, {"out_dir": (str, Path), "progress": (bool,), "retry_failed": (bool,), "parameters": (dict,)})
        if not str(self.out_dir).strip():
            raise ValueError("run.out_dir: give the run folder (empty)")
        task, model, gen = self.task, self.model, self.generation
        generates = protocol_for(task.benchmark).generates
        if gen.backend != "auto" and model.served != (gen.backend if gen.backend in SERVED.values() else None):
            need = next((p for p, b in SERVED.items() if b == gen.backend), None)
            raise ValueError(f"generation.backend: {gen.backend!r} needs a {need}<model> spec, not {model.spec!r}" if need
                             else f"generation.backend: {gen.backend!r} runs the model in this process; {model.spec!r} "
                                  f"is served ({model.served}): use backend 'auto' or {model.served!r}")
        if gen.batch_policy and self.backend_name != "batched":
            raise ValueError(f"generation.batch_policy: applies to backend 'batched', not {self.backend_name!r}")
        if gen.stop_strings and model.served == "openai":
            raise ValueError("generation.stop_strings: model settings apply to local transformers models, "
                             "not an openai: endpoint")
        if not generates and gen.baseline != "none":
            raise ValueError(f"generation.baseline: {gen.baseline!r} is for generation benchmarks "
                             f"({', '.join(task_names(protocol=GENERATION.name))}); "
                             f"a ranking baseline is a model spec such as 'random'")
        if generates and model.spec.startswith("random") and gen.baseline == "none":
            gen = replace(gen, baseline="random")  # a "random" model on a generation benchmark is the Random Choice baseline
        if gen.max_new_tokens is None:
            mode = get_task(task.benchmark).prompt_mode(task.prompt_mode) if generates else None
            gen = replace(gen, max_new_tokens=(mode and mode.max_new_tokens) or protocol_for(task.benchmark).max_new_tokens)
        _set(self, generation=gen)
        if not generates or gen.baseline in ("none", "ocr"):  # a model will be loaded: check its spec
            try:
                check_spec(model.spec)
            except ValueError as e:
                raise ValueError(f"model.spec: {e}") from None
        if not generates and not RECIPES[task.recipe].generates and rank_problem(model.spec, model.engine_options):
            raise ValueError(f"model.spec: {rank_problem(model.spec, model.engine_options)}")

    def with_params(self, **params) -> RunSpec:
        """This spec with some flat parameters changed (checked again)."""
        return RunSpec.from_params(**{**self.params(), **params})

    @classmethod
    def from_manifest(cls, man: dict, **params) -> RunSpec:
        """The spec a manifest records (``spec``: the parts; or the flat ``config`` of runs before it), with
        ``params`` changed."""
        return cls.from_params(**{**run_params(man), **params})

    # ----------------------------------------------------------------------------------------- reading
    def params(self) -> dict[str, Any]:
        """The flat parameters this spec was built from (:data:`FLAT` names and the run's own fields)."""
        out = {}
        for name, (part, key) in FLAT.items():
            obj = getattr(self, part)
            if key.startswith("data."):
                out[name] = obj.data.get(key[5:])  # (None for a ranking run, as the flat config recorded it)
            else:
                out[name] = getattr(obj, key)
        if protocol_for(self.task.benchmark).generates:
            out["data"] = {}
        return {**out, **{k: getattr(self, k) for k in RUN_FIELDS}}

    def __getattr__(self, name):
        """Flat reads (``spec.limit``, ``spec.source``) of the part that holds the field (:data:`FLAT`)."""
        if name.startswith("__") or name not in FLAT:
            raise AttributeError(name)
        part, key = FLAT[name]
        obj = object.__getattribute__(self, part)
        return obj.data.get(key[5:]) if key.startswith("data.") else getattr(obj, key)

    @property
    def benchmark(self) -> str:
        return self.task.benchmark

    @property
    def protocol(self) -> str:
        return protocol_of(self.task.benchmark)

    @property
    def generates(self) -> bool:
        """Whether the benchmark's protocol generates a response (else it ranks options)."""
        return protocol_for(self.task.benchmark).generates

    @property
    def backend_name(self) -> str:
        """The back-end this run generates with: ``backend``, or for "auto" the spec's server, else "batched"."""
        return self.generation.backend if self.generation.backend != "auto" else (self.model.served or "batched")

    def policy(self) -> BatchPolicy:
        """The ``BatchPolicy`` of the batched back-end: its defaults with ``batch_policy`` applied."""
        return policy_from(self.generation.batch_policy)

    def mode(self):
        """The generation prompt mode (``tasks.modes.PromptMode``) of this run."""
        return get_task(self.task.benchmark).prompt_mode(self.task.prompt_mode)

    def option_settings(self) -> dict | None:
        return self.selection.option_settings()

    def select(self, items: list) -> list:
        """The items this run asks, in order: the first ``limit`` (of the lettered ones when the option
        order is set), each with its options in the configured order (``tasks.options.select_and_arrange``)."""
        s = self.selection
        return options.select_and_arrange(items, s.rotation, s.permutation_seed, s.lettered_only, s.limit)

    def model_settings(self) -> ModelSettings:
        """Processor keywords, system prompt, chat-template keywords and stop strings for the adapter."""
        m = self.model
        return ModelSettings(dict(m.processor_kwargs), m.system_prompt, dict(m.chat_template_kwargs),
                             tuple(self.generation.stop_strings))

    def adapter_options(self) -> dict:
        """Keyword arguments of ``mmbench_lib.models.load_adapter`` for ``model.spec``."""
        m = self.model
        settings = {"settings": self.model_settings()} if self.model_settings() else {}
        return {"device": m.device, "dtype": m.dtype, "scorer": self.generation.scorer, "revision": m.revision,
                "trust_remote_code": m.trust_remote_code, "device_map": m.device_map, "max_memory": m.max_memory,
                **settings, **m.engine_options}

    def to_dict(self) -> dict[str, Any]:
        """The parts as they are, paths as strings (the manifest's ``spec``)."""
        return {**{p: _plain(asdict(getattr(self, p))) for p in PARTS},
                "run": _plain({k: getattr(self, k) for k in RUN_FIELDS})}

    def identity(self) -> dict[str, Any]:
        """What decides what this run computes, and nothing else: the task (benchmark, data with paths made
        absolute, split, prompt mode, recipe), the model (spec, revision, dtype, remote code, model-card settings,
        video path, the engine options that change an answer), how answers are made and read (reduction; when a
        response is generated: max new tokens, stop strings, back-end, baseline, random fallback), the option order
        and seed, and the judges that apply. Not: where it is written, placement, speed (batching, scorer engine),
        display names, progress, ``limit`` and shards (a resume may extend the limit; shards merge into one run)."""
        t, m, g, s, j = self.task, self.model, self.generation, self.selection, self.judges
        generates = self.generates or RECIPES[t.recipe].generates
        paths = set(get_task(t.benchmark).path_parameters) | {"source", "cache_dir"}

        def absolute(key, v):
            if key in paths and isinstance(v, (str, Path)) and v and (key != "source" or resolve(v).exists()):
                return str(resolve(v))
            if key in paths and isinstance(v, dict):
                return {k: absolute(key, x) for k, x in v.items()}
            return v

        data = {k: absolute(k, v) for k, v in t.data.items() if k != "cache_dir"}
        out = {
            "task": {"benchmark": t.benchmark, "data": data, "split": t.split, "prompt_mode": t.prompt_mode,
                     "recipe": None if self.generates else t.recipe},
            "model": {"spec": m.spec, "revision": m.revision, "dtype": m.dtype, "trust_remote_code": m.trust_remote_code,
                      "processor_kwargs": m.processor_kwargs, "system_prompt": m.system_prompt,
                      "chat_template_kwargs": m.chat_template_kwargs, "video_input": m.video_input,
                      "engine": {k: v for k, v in m.engine_options.items() if k in RESULT_OPTIONS}},
            "generation": {"reduction": None if RECIPES[t.recipe].generates or self.generates else g.reduction,
                           **({"max_new_tokens": g.max_new_tokens, "stop_strings": list(g.stop_strings),
                               "backend": self.backend_name} if generates else {}),
                           **({"baseline": g.baseline, "use_random": g.use_random} if self.generates else {})},
            "selection": {"seed": s.seed, "options": s.option_settings()},
            "judges": ({"ocr_lang": j.ocr_lang, "ocr_psm": j.ocr_psm} if g.baseline == "ocr" else {}) if self.generates
            else {"clip_model": j.clip_model, "clip_pretrained": j.clip_pretrained,
                  "generated_dir": str(resolve(j.generated_dir)) if j.generated_dir else None},
        }
        return _plain(out)

    def identity_sha256(self) -> str:
        return identity_hash(self.identity())


def identity_hash(identity: dict) -> str:
    """A stable hash of an identity dict (sorted keys, JSON)."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()


def run_params(man: dict) -> dict:
    """The flat parameters of a run from its manifest: its ``spec`` parts flattened, or the flat ``config``
    that manifests before the spec recorded (``{}`` when it has neither)."""
    spec = man.get("spec") if isinstance(man, dict) else None
    if isinstance(spec, dict) and isinstance(spec.get("task"), dict):
        out = {}
        for name, (part, key) in FLAT.items():
            values = spec.get(part) or {}
            if key.startswith("data."):
                if key[5:] in (values.get("data") or {}):
                    out[name] = values["data"][key[5:]]
            elif key in values:
                out[name] = values[key]
        if "source" in out:
            out["data"] = {}
        return {**out, **(spec.get("run") or {})}
    config = man.get("config") if isinstance(man, dict) else None
    return dict(config) if isinstance(config, dict) else {}


def RunConfig(benchmark: str | None = None, out_dir: str | Path | None = None, **params) -> RunSpec:  # noqa: N802
    """The flat constructor of earlier versions: ``RunSpec.from_params``."""
    return RunSpec.from_params(benchmark, out_dir, **params)
