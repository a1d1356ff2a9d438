"""One typed run config for both protocols.

``RunConfig`` holds everything that decides what a run computes (benchmark, data, model, recipe,
generation settings, sharding, CLIP and OCR settings, endpoint options) and checks it in
``__post_init__``, before any data or model is loaded: a wrong value raises a one-line
``ValueError`` naming the field. ``to_dict()`` is what the run's manifest records as ``config``.
``mmbench_lib.pipeline.runs.evaluate(config)`` runs it.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from mmbench_lib.tasks.base import get_task, task_names
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
#: generation back-ends (``RunConfig.backend``); "auto" picks from the model spec (``backend_name``)
BACKENDS = {
    "hf": "transformers' generate, one request at a time, no padding (the reference)",
    "batched": "the suite's batched generation under RunConfig.batch_policy (mmbench_lib.models.batching)",
    "openai": "an OpenAI-compatible server (openai:<model>)",
    "vllm": "vLLM (vllm:<model>)",
}
#: the back-end a spec prefix implies; the in-process back-ends (hf, batched) take any other spec
SERVED = {"openai:": "openai", "vllm:": "vllm"}
ENDPOINT_KEYS = {"base_url", "api_key_env", "concurrency", "max_retries", "timeout", "backoff", "max_backoff",
                 "max_retry_after", "extra_body", "server", "tokenizer",  # openai: and vllm:
                 "tensor_parallel_size", "data_parallel_size", "gpu_memory_utilization", "max_model_len",  # vllm:
                 "kv_cache_memory_bytes", "enforce_eager", "start_timeout", "server_args", "python"}

#: field -> accepted types (``None`` allowed where listed); checked before anything else
_TYPES: dict[str, tuple] = {
    "benchmark": (str,), "out_dir": (str, Path), "data": (dict,), "source": (str, Path, type(None)),
    "split": (str, type(None)), "subjects": (str, list, tuple, type(None)), "cache_dir": (str, Path, type(None)),
    "model": (str,), "recipe": (str,), "reduction": (str, type(None)), "scorer": (str,), "baseline": (str,),
    "max_new_tokens": (int, type(None)), "batch_size": (int,), "device": (str,), "dtype": (str, type(None)),
    "revision": (str, type(None)), "trust_remote_code": (bool,), "device_map": (str, dict, type(None)),
    "max_memory": (dict, type(None)), "limit": (int, type(None)), "seed": (int,),
    "shard_index": (int,), "num_shards": (int,), "generated_dir": (str, Path, type(None)), "clip_model": (str,),
    "clip_pretrained": (str, type(None)), "ocr_lang": (str, type(None)), "ocr_psm": (int, type(None)),
    "endpoint": (dict,), "use_random": (bool,), "retry_failed": (bool,), "progress": (bool,), "parameters": (dict,),
    "rotation": (int,), "permutation_seed": (int, type(None)), "lettered_only": (bool,), "video_input": (str,),
    "backend": (str,), "batch_policy": (dict,),
    "processor_kwargs": (dict,), "system_prompt": (str, type(None)), "chat_template_kwargs": (dict,),
    "stop_strings": (list, tuple), "prompt_mode": (str, type(None)), "model_name": (str,),
}
#: ``max_new_tokens`` when neither the run nor its prompt mode sets one
DEFAULT_MAX_NEW_TOKENS = 32


def protocol_of(benchmark: str) -> str:
    """``"ranking"`` or ``"generation"``: the task's ``protocol``."""
    return get_task(benchmark).protocol


@dataclass
class RunConfig:
    """One evaluation run. Ranking benchmarks read ``data`` (the loader's keyword arguments: paths
    and filters); generation benchmarks read ``source``/``split``/``subjects``/``cache_dir``."""

    benchmark: str
    out_dir: str | Path
    data: dict = field(default_factory=dict)
    source: str | Path | None = None
    split: str | None = None
    subjects: list | str | None = None
    cache_dir: str | Path | None = None
    model: str = "smollm2"
    recipe: str = DEFAULT_RECIPE
    reduction: str | None = None
    scorer: str = "reference"
    baseline: str = "none"
    max_new_tokens: int | None = None  # None: the prompt mode's default (official: DEFAULT_MAX_NEW_TOKENS; cot: 512)
    batch_size: int = 8
    device: str = "auto"  # one device; ignored when device_map is set
    device_map: str | dict | None = None  # None: one device; "auto": accelerate over the GPUs; or module -> device
    max_memory: dict | None = None  # with device_map: cap per device, e.g. {0: "38GiB", "cpu": "120GiB"}
    dtype: str | None = None
    revision: str | None = None
    trust_remote_code: bool = False
    limit: int | None = None
    seed: int = 0
    shard_index: int = 0
    num_shards: int = 1
    generated_dir: str | Path | None = None
    clip_model: str = "ViT-L-14"
    clip_pretrained: str | None = "openai"
    ocr_lang: str | None = None
    ocr_psm: int | None = None
    endpoint: dict = field(default_factory=dict)
    use_random: bool = True
    retry_failed: bool = False
    progress: bool = True
    parameters: dict = field(default_factory=dict)  # the caller's own parameters (notebook cell), recorded as given
    # option order of lettered multiple choice (mmbench_lib.tasks.options; CircularEval runs, one per order)
    rotation: int = 0  # cyclic shift k of each item's options; k > 0 keeps the items with more than k options
    permutation_seed: int | None = None  # instead: the options shuffled by a seed (per item id)
    lettered_only: bool = False  # keep only multiple-choice items answered by letter (implied by the two above)
    # video items: "native" (one clip through the processor's videos=, for families that take video) or "frames"
    video_input: str = "native"
    # generation back-end (BACKENDS; "auto": from the model spec, else "batched") and, for "batched", the
    # BatchPolicy fields to change (mmbench_lib.models.batching: max_rows, requests_per_call, kv_decode, ...)
    backend: str = "auto"
    batch_policy: dict = field(default_factory=dict)
    # model settings to match a model card (mmbench_lib.models.settings; recorded in the manifest's model record)
    processor_kwargs: dict = field(default_factory=dict)  # processor keywords, e.g. {"max_pixels": 1003520}
    system_prompt: str | None = None  # a system turn (chat-template prompts)
    chat_template_kwargs: dict = field(default_factory=dict)  # e.g. {"enable_thinking": False}
    stop_strings: list | tuple = ()  # generation stops at the first of these (the response ends before it)
    # generation prompt mode (the task's ``prompt_modes``: official, cot, cot+answer-line; mmbench_lib.tasks.modes)
    prompt_mode: str | None = "official"
    model_name: str = ""  # display name in tables and figures (empty: from the spec; a local folder: its name)

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            ok = _TYPES[f.name]
            if not isinstance(v, ok) or (isinstance(v, bool) and bool not in ok):
                names = " or ".join("None" if t is type(None) else t.__name__ for t in ok)
                raise ValueError(f"RunConfig.{f.name}: expected {names}, got {type(v).__name__} {v!r}")
        self.benchmark = self.benchmark.strip()
        self._known("benchmark", self.benchmark, task_names(aliases=True))
        if not str(self.out_dir).strip():
            raise ValueError("RunConfig.out_dir: give the run folder (empty)")
        self._known("recipe", self.recipe, sorted(RECIPES))
        self._known("reduction", self.reduction, (None, *REDUCTIONS))
        self._known("scorer", self.scorer, scorer_names())
        self._known("baseline", self.baseline, BASELINES)
        self._known("dtype", self.dtype, DTYPES)
        self._known("video_input", self.video_input, ("native", "frames"))
        if not DEVICE_RE.fullmatch(self.device):
            raise ValueError(f"RunConfig.device: {self.device!r} is not auto, cpu, mps, cuda or cuda:<n>")
        for name, why in (("device_map", device_map_problem(self.device_map)),
                          ("max_memory", max_memory_problem(self.max_memory, self.device_map))):
            if why:
                raise ValueError(f"RunConfig.{name}: {why}")
        if self.max_memory:
            self.max_memory = {memory_key(k): v for k, v in self.max_memory.items()}
        for name, low in (("max_new_tokens", 1), ("batch_size", 1), ("num_shards", 1), ("limit", 0), ("seed", 0),
                          ("rotation", 0), ("permutation_seed", 0)):
            v = getattr(self, name)
            if v is not None and v < low:
                raise ValueError(f"RunConfig.{name}: must be >= {low}, got {v}")
        if self.limit == 0:
            self.limit = None  # 0 means all items, as the notebooks' parameter does
        if self.rotation and self.permutation_seed is not None:
            raise ValueError("RunConfig.rotation: give a rotation or a permutation_seed, not both")
        if not 0 <= self.shard_index < self.num_shards:
            raise ValueError(f"RunConfig.shard_index: must be in [0, {self.num_shards}), got {self.shard_index}")
        if self.ocr_psm is not None and not 0 <= self.ocr_psm <= 13:
            raise ValueError(f"RunConfig.ocr_psm: tesseract page segmentation modes are 0-13, got {self.ocr_psm}")
        unknown = set(self.endpoint) - ENDPOINT_KEYS
        if unknown:
            raise ValueError(f"RunConfig.endpoint: unknown option(s) {sorted(unknown)}; known: {sorted(ENDPOINT_KEYS)}")
        if self.endpoint and not self.model.startswith(("openai:", "vllm:")):
            raise ValueError(f"RunConfig.endpoint: endpoint options apply only to openai:<model> and vllm:<model>, "
                             f"not {self.model!r}")
        self._check_backend()
        if not all(isinstance(x, str) and x for x in self.stop_strings):
            raise ValueError(f"RunConfig.stop_strings: expected non-empty strings, got {list(self.stop_strings)!r}")
        self.stop_strings = list(self.stop_strings)
        if self.model_settings() and self.model.startswith("openai:"):
            raise ValueError("RunConfig.processor_kwargs/system_prompt/chat_template_kwargs/stop_strings: model settings "
                             "apply to local transformers models, not an openai: endpoint")
        if self.subjects in ("all", [], ()):
            self.subjects = None
        elif isinstance(self.subjects, (str, tuple)):
            self.subjects = [self.subjects] if isinstance(self.subjects, str) else list(self.subjects)
        if self.protocol == "ranking":
            if self.prompt_mode not in (None, "", "official"):
                raise ValueError(f"RunConfig.prompt_mode: {self.prompt_mode!r} applies to generation benchmarks "
                                 f"({', '.join(task_names(protocol='generation'))}); a ranking run's protocol is its recipe")
            self.prompt_mode = "official"
            if not self.data:
                raise ValueError(f"RunConfig.data: {self.benchmark} needs its loader's arguments (annotation_file, ...)")
            if self.baseline != "none":
                raise ValueError(f"RunConfig.baseline: {self.baseline!r} is for generation benchmarks "
                                 f"({', '.join(task_names(protocol='generation'))}); "
                                 f"a ranking baseline is a model spec such as 'random'")
        else:
            if self.source is None or not str(self.source).strip():
                raise ValueError(f"RunConfig.source: {self.benchmark} needs a hub id or a local folder")
            task = get_task(self.benchmark)
            self.split = task.resolve_split(self.split)
            self._known("split", self.split, task.splits)
            try:
                self.split, self.prompt_mode = task.resolve_mode(self.split, self.prompt_mode)
            except ValueError as e:
                raise ValueError(f"RunConfig.prompt_mode: {e}") from None
            if self.model.startswith("random") and self.baseline == "none":
                self.baseline = "random"  # a "random" model on a generation benchmark is the Random Choice baseline
        if self.max_new_tokens is None:
            mode = get_task(self.benchmark).prompt_mode(self.prompt_mode) if self.protocol == "generation" else None
            self.max_new_tokens = (mode and mode.max_new_tokens) or DEFAULT_MAX_NEW_TOKENS
        if self.protocol == "ranking" or self.baseline in ("none", "ocr"):  # a model will be loaded: check its spec
            try:
                check_spec(self.model)
            except ValueError as e:
                raise ValueError(f"RunConfig.model: {e}") from None
        if self.protocol == "ranking" and not RECIPES[self.recipe].generates and rank_problem(self.model, self.endpoint):
            raise ValueError(f"RunConfig.model: {rank_problem(self.model, self.endpoint)}")

    def _check_backend(self) -> None:
        self._known("backend", self.backend, ("auto", *BACKENDS))
        served = next((b for prefix, b in SERVED.items() if self.model.startswith(prefix)), None)
        if self.backend != "auto" and served != (self.backend if self.backend in SERVED.values() else None):
            need = next((p for p, b in SERVED.items() if b == self.backend), None)
            raise ValueError(f"RunConfig.backend: {self.backend!r} needs a {need}<model> spec, not {self.model!r}" if need
                             else f"RunConfig.backend: {self.backend!r} runs the model in this process; {self.model!r} "
                                  f"is served ({served}): use backend 'auto' or {served!r}")
        try:
            policy_from(self.batch_policy)
        except ValueError as e:
            raise ValueError(f"RunConfig.batch_policy: {e}") from None
        if self.batch_policy and self.backend_name != "batched":
            raise ValueError(f"RunConfig.batch_policy: applies to backend 'batched', not {self.backend_name!r}")

    @property
    def backend_name(self) -> str:
        """The back-end this run generates with: ``backend``, or for "auto" the spec's server, else "batched"."""
        if self.backend != "auto":
            return self.backend
        return next((b for prefix, b in SERVED.items() if self.model.startswith(prefix)), "batched")

    def policy(self) -> BatchPolicy:
        """The ``BatchPolicy`` of the batched back-end: its defaults with ``batch_policy`` applied."""
        return policy_from(self.batch_policy)

    @staticmethod
    def _known(name: str, value, known) -> None:
        if value not in known:
            raise ValueError(f"RunConfig.{name}: unknown value {value!r}; use one of {list(known)}")

    @property
    def protocol(self) -> str:
        return protocol_of(self.benchmark)

    def mode(self):
        """The generation prompt mode (``tasks.modes.PromptMode``) of this run."""
        return get_task(self.benchmark).prompt_mode(self.prompt_mode)

    def option_settings(self) -> dict | None:
        """The option-order settings when any is set (recorded in the manifest as ``options`` and
        checked on resume), else ``None``: a run in the benchmark's own order records nothing."""
        if not (self.rotation or self.permutation_seed is not None or self.lettered_only):
            return None
        return {"rotation": self.rotation, "permutation_seed": self.permutation_seed, "lettered_only": True}

    def select(self, items: list) -> list:
        """The items this run asks, in order: the first ``limit`` (of the lettered ones when the option
        order is set), each with its options in the configured order (``tasks.options.select_and_arrange``)."""
        return options.select_and_arrange(items, self.rotation, self.permutation_seed, self.lettered_only, self.limit)

    def model_settings(self) -> ModelSettings:
        """Processor keywords, system prompt, chat-template keywords and stop strings for the adapter."""
        return ModelSettings(dict(self.processor_kwargs), self.system_prompt, dict(self.chat_template_kwargs),
                             tuple(self.stop_strings))

    def adapter_options(self) -> dict:
        """Keyword arguments of ``mmbench_lib.models.load_adapter`` for ``model``."""
        settings = {"settings": self.model_settings()} if self.model_settings() else {}
        return {"device": self.device, "dtype": self.dtype, "scorer": self.scorer, "revision": self.revision,
                "trust_remote_code": self.trust_remote_code, "device_map": self.device_map, "max_memory": self.max_memory,
                **settings, **self.endpoint}

    def to_dict(self) -> dict[str, Any]:
        """Every field, paths as strings (what the manifest records)."""
        def plain(v):
            if isinstance(v, Path):
                return str(v)
            if isinstance(v, dict):
                return {k: plain(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [plain(x) for x in v]
            return v

        return {k: plain(v) for k, v in asdict(self).items()}
