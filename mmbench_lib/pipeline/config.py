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

from mmbench_lib.core.flags import is_bool, parse_bool
from mmbench_lib.core.secrets import check_parameters as check_no_credentials
from mmbench_lib.core.manifest import resolve
from mmbench_lib.core.record import from_manifest
from mmbench_lib.tasks.base import get_task, task_names
from mmbench_lib.tasks.protocols import GENERATION, protocol_for
from mmbench_lib.models import LOAD_OPTIONS
from mmbench_lib.models.openai_compat import check_options
from mmbench_lib.models.policy import BatchPolicy, policy_from
from mmbench_lib.models.placement import (device_map_problem, max_memory_problem, memory_key, parse_device_map,
                                          parse_max_memory)
from mmbench_lib.models.registry import check_spec, rank_problem
from mmbench_lib.models.settings import ModelSettings
from mmbench_lib.pipeline.baselines import BASELINES
from mmbench_lib.scoring import REDUCTIONS, scorer_names
from mmbench_lib.tasks import options
from mmbench_lib.tasks.recipes import DEFAULT_RECIPE, RECIPES
from mmbench_lib.tasks.thinking import SWITCHES as THINKING_SWITCHES, ranking_refusal

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


def _flag(v):
    if not is_bool(v):
        return f"expected bool (true/false, yes/no, 1/0), got {v!r}"


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
                "max_model_len": _whole(1), "kv_cache_memory_bytes": _whole(1), "enforce_eager": _flag,
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


def _type_names(kind: tuple) -> str:
    return " or ".join("None" if t is type(None) else t.__name__ for t in kind)


def _types(part: str, obj) -> None:
    """Each field of ``obj`` against the type its metadata declares (``kind``); a boolean field is parsed by the
    one rule (``core.flags.parse_bool``: true/false, yes/no, 1/0) and holds a bool from then on."""
    for f in fields(obj):
        ok, v = f.metadata.get("kind"), getattr(obj, f.name)
        if ok is None:
            continue
        if bool in ok and not (v is None and _NONE in ok):
            try:
                _set(obj, **{f.name: parse_bool(v)})
            except ValueError as e:
                raise ValueError(f"{part}.{f.name}: {e}") from None
        elif not isinstance(v, ok) or (isinstance(v, bool) and bool not in ok):
            raise ValueError(f"{part}.{f.name}: expected {_type_names(ok)}, got {type(v).__name__} {v!r}")
        elif v is not None and f.metadata.get("choices"):
            _known(f"{part}.{f.name}", v, list(f.metadata["choices"]()))


def _values(obj, identity: bool = False) -> dict:
    """A part's fields by name (``identity``: only those its metadata marks as deciding what a run computes)."""
    return {f.name: getattr(obj, f.name) for f in fields(obj) if not identity or f.metadata.get("identity")}


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


def _f(default=None, kind=(str,), doc: str = "", *, factory=None, flat: str | None = None, cli=None, keys=None,
       choices=None, identity: bool = False):
    """A spec field and its notebook-facing metadata: ``kind`` (the types it takes; ``bool`` parsed by the one
    rule), ``doc`` (the docs table's line), ``flat`` (its flat parameter name; default: the field's),
    ``cli`` (an ``mmbench run`` shortcut: ``True``, or ``(hint, parse)`` for text parsed into the value),
    ``keys`` (task.data: data keys that are flat parameters of their own, name -> (kind, doc)), ``choices`` (a
    function giving the values it takes besides None), ``identity`` (the model part: the field decides what a run
    computes, ``RunSpec.identity``)."""
    meta = {"kind": kind, "doc": doc, "flat": flat, "cli": cli, "keys": keys or {}, "choices": choices,
            "identity": identity}
    return field(default_factory=factory, metadata=meta) if factory else field(default=default, metadata=meta)


def _yaml_of(kind: type):
    def parse(text: str):
        import yaml

        value = yaml.safe_load(text)
        if not isinstance(value, kind):
            raise ValueError(f"expected a YAML {kind.__name__}, got {text!r}")
        return value
    return parse


def _policy_text(text: str) -> dict:
    """``--batch-policy`` text: a YAML mapping of ``BatchPolicy`` fields, checked by name, type and value."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"not YAML: {str(e).splitlines()[0]}") from None
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping such as '{{max_rows: 64}}', got {text!r}")
    policy_from(value)
    return value


@dataclass(frozen=True)
class TaskSpec:
    """What is asked: the benchmark, its ONE data dict (ranking: the loader's keyword arguments; generation:
    ``source``, ``subjects``, ``cache_dir``; ``tasks.protocols.Protocol.check_data``), the split, the prompt mode
    (generation; ``tasks.modes``) and the recipe (ranking; ``tasks.recipes``)."""

    benchmark: str = _f(None, (str,), "the task (`mmbench list benchmarks`)", cli=True)
    data: dict = _f(kind=(dict,), factory=dict, doc="the task's data: its loader's arguments (ranking) or source, "
                    "subjects, cache_dir (generation)", keys={
                        "source": ((str, Path, _NONE), "generation: hub id or local folder (task.data.source)"),
                        "subjects": ((str, list, _NONE), "generation: all, or a list of subjects (task.data.subjects)"),
                        "cache_dir": ((str, Path, _NONE), "generation: the datasets cache (task.data.cache_dir)")})
    split: str | None = _f(None, (str, _NONE), "generation: the split (empty: the task's default)", cli=True)
    prompt_mode: str | None = _f("official", (str, _NONE), "generation: the prompt and what the parser reads", cli=True)
    recipe: str = _f(DEFAULT_RECIPE, (str,), "ranking: the recipe (`mmbench list recipes`)", cli=True,
                     choices=lambda: sorted(RECIPES))

    def __post_init__(self):
        _types("task", self)
        _known("task.benchmark", self.benchmark.strip(), task_names(aliases=True))
        _set(self, benchmark=self.benchmark.strip())
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

    spec: str = _f("smollm2", (str,), "the model spec (`mmbench list models`)", flat="model", cli=True, identity=True)
    name: str = _f("", (str,), "display name in tables and figures (empty: from the spec)", flat="model_name", cli=True)
    dtype: str | None = _f(None, (str, _NONE), "auto, float32, float16 or bfloat16", cli=True,
                           choices=lambda: DTYPES[1:], identity=True)
    device: str = _f("auto", (str,), "auto, cpu, mps, cuda or cuda:N (ignored with device_map)", cli=True)
    device_map: str | dict | None = _f(None, (str, dict, _NONE), "null: one device; auto: accelerate over the GPUs; "
                                       "or module -> device", cli=("auto | none | '{module: device, ...}'", parse_device_map))
    max_memory: dict | None = _f(None, (dict, _NONE), "with device_map: cap per device, e.g. {0: 38GiB}",
                                 cli=("DEVICE=SIZE[,DEVICE=SIZE]", parse_max_memory))
    revision: str | None = _f(None, (str, _NONE), "hub revision (branch, tag or commit)", cli=True, identity=True)
    trust_remote_code: bool = _f(False, (bool,), "run the model repository's own code", cli=True, identity=True)
    processor_kwargs: dict = _f(kind=(dict,), factory=dict, doc="processor keywords, e.g. {max_pixels: 1003520}",
                                cli=("'{max_pixels: 1003520, ...}'", _yaml_of(dict)), identity=True)
    system_prompt: str | None = _f(None, (str, _NONE), "a system turn before each question", cli=True, identity=True)
    chat_template_kwargs: dict = _f(kind=(dict,), factory=dict, doc="chat-template keywords, e.g. {enable_thinking: "
                                    "false} (its switches parsed as booleans)",
                                    cli=("'{enable_thinking: false}'", _yaml_of(dict)), identity=True)
    engine_options: dict = _f(kind=(dict,), factory=dict, doc="vllm:/openai: options (docs/scale.md)", flat="endpoint")
    video_input: str = _f("native", (str,), "native (one clip) or frames", choices=lambda: ("native", "frames"),
                          identity=True)

    def __post_init__(self):
        _types("model", self)
        kw = dict(self.chat_template_kwargs)
        for key in THINKING_SWITCHES:  # parsed once: a template reads `enable_thinking is false`, never "false"
            if key in kw:
                try:
                    kw[key] = parse_bool(kw[key])
                except ValueError as e:
                    raise ValueError(f"model.chat_template_kwargs.{key}: {e}") from None
        _set(self, chat_template_kwargs=kw)
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
        _set(self, engine_options={k: parse_bool(v) if declared[k] is _flag else v for k, v in self.engine_options.items()})


@dataclass(frozen=True)
class GenerationSpec:
    """How an answer is produced and read: the likelihood ``scorer`` and ``reduction`` (ranking), the cap of new
    tokens (``None``: the prompt mode's, else the protocol's, ``tasks.protocols``), stop strings, the generation
    ``backend`` and its ``batch_policy`` (``models.batching``), ``batch_size``, the ``baseline`` (generation: MMMU
    §4.1) and whether an unparseable answer draws the official random fallback (``use_random``)."""

    scorer: str = _f("shared-prefix", (str,), "likelihood engine: shared-prefix or reference (docs/engine.md)",
                     choices=scorer_names)
    reduction: str | None = _f(None, (str, _NONE), "ranking: sum or mean log-likelihood (null: the recipe's)",
                               choices=lambda: sorted(REDUCTIONS))
    max_new_tokens: int | None = _f(None, (int, _NONE), "cap of new tokens (null: the prompt mode's)")
    stop_strings: list | tuple = _f((), (list, tuple), "the response ends before the first of these",
                                    cli=("'[\"\\n\\n\", ...]' (a YAML list)", _yaml_of(list)))
    backend: str = _f("auto", (str,), "auto, hf, batched, openai or vllm", cli=True, choices=lambda: ("auto", *BACKENDS))
    batch_size: int = _f(8, (int,), "items per call", cli=True)
    batch_policy: dict = _f(kind=(dict,), factory=dict, doc="batched back-end: BatchPolicy fields",
                            cli=("'{max_rows: 64, kv_decode: false}' (BatchPolicy fields)", _policy_text))
    baseline: str = _f("none", (str,), "generation: none, random, frequent or ocr", choices=lambda: BASELINES)
    use_random: bool = _f(True, (bool,), "generation: an unparseable answer draws the official random fallback")

    def __post_init__(self):
        _types("generation", self)
        for name, low in (("max_new_tokens", 1), ("batch_size", 1)):
            v = getattr(self, name)
            if v is not None and v < low:
                raise ValueError(f"generation.{name}: must be >= {low}, got {v}")
        if not all(isinstance(x, str) and x for x in self.stop_strings):
            raise ValueError(f"generation.stop_strings: expected non-empty strings, got {list(self.stop_strings)!r}")
        _set(self, stop_strings=list(self.stop_strings))
        try:
            policy = policy_from(self.batch_policy)
        except ValueError as e:
            raise ValueError(f"generation.batch_policy: {e}") from None
        _set(self, batch_policy={k: getattr(policy, k) for k in self.batch_policy})  # (its yes/no fields parsed)


@dataclass(frozen=True)
class SelectionSpec:
    """Which items, in which option order: the first ``limit`` (0/None: all), this process' shard, the seed,
    and the option order of lettered multiple choice (``tasks.options``; CircularEval, one run per order)."""

    limit: int | None = _f(None, (int, _NONE), "the first N items (0 or null: all)", cli=True)
    seed: int = _f(0, (int,), "the run's seed", cli=True)
    shard_index: int = _f(0, (int,), "this process' shard, 0 .. num_shards - 1")
    num_shards: int = _f(1, (int,), "shards the items are split into")
    rotation: int = _f(0, (int,), "cyclic shift k of each item's options (k > 0: items with more than k options)")
    permutation_seed: int | None = _f(None, (int, _NONE), "instead: the options shuffled by a seed (per item id)")
    lettered_only: bool = _f(False, (bool,), "only multiple-choice items answered by letter (implied by the two above)")

    def __post_init__(self):
        _types("selection", self)
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

    clip_model: str = _f("ViT-L-14", (str,), "open_clip model judging SEED-2's image outputs")
    clip_pretrained: str | None = _f("openai", (str, _NONE), "its pretrained tag (null: random weights, tests only)")
    generated_dir: str | Path | None = _f(None, (str, Path, _NONE), "images generated elsewhere, named QUESTION_ID.png")
    ocr_lang: str | None = _f(None, (str, _NONE), "tesseract language of the OCR baseline (null: the task's)")
    ocr_psm: int | None = _f(None, (int, _NONE), "tesseract page segmentation mode, 0-13")

    def __post_init__(self):
        _types("judges", self)
        if self.ocr_psm is not None and not 0 <= self.ocr_psm <= 13:
            raise ValueError(f"judges.ocr_psm: tesseract page segmentation modes are 0-13, got {self.ocr_psm}")


PARTS = {"task": TaskSpec, "model": ModelSpec, "generation": GenerationSpec, "selection": SelectionSpec,
         "judges": JudgeSpec}
@dataclass(frozen=True)
class Param:
    """One flat parameter of the surface: its ``name``, the ``part`` and ``key`` of the spec holding it (``run`` for
    the run's own fields; ``data.<key>`` for a data key), the types it takes, its ``mmbench run`` shortcut (``None``,
    ``True`` or ``(hint, parse)``) and its docs line. Everything below is derived from the parts' field metadata."""

    name: str
    part: str
    key: str
    kind: tuple
    cli: Any
    doc: str
    choices: Any = None  # a function giving the values it takes besides None

    def allowed(self) -> list | None:
        return list(self.choices()) if self.choices else None

    @property
    def type_name(self) -> str:
        return _type_names(self.kind).replace("None", "null")


def _surface() -> tuple[Param, ...]:
    out = []
    for part, cls in PARTS.items():
        for f in fields(cls):
            m = f.metadata
            out.append(Param(m["flat"] or f.name, part, f.name, m["kind"], m["cli"], m["doc"], m["choices"]))
            out += [Param(k, part, f"{f.name}.{k}", kind, None, doc) for k, (kind, doc) in m["keys"].items()]
    return tuple(out)


PARTS = {"task": TaskSpec, "model": ModelSpec, "generation": GenerationSpec, "selection": SelectionSpec,
         "judges": JudgeSpec}
#: every flat parameter of the five parts, in the parts' order (then the run's own fields, ``RUN_FIELDS``)
SURFACE: tuple[Param, ...] = _surface()
#: flat parameter -> (part, field); generation's source/subjects/cache_dir are keys of ``task.data``
FLAT: dict[str, tuple[str, str]] = {p.name: (p.part, p.key) for p in SURFACE}
#: ``mmbench run`` shortcuts: flat name -> (type of its value, (hint, parse) for a parsed text or None)
SHORTCUTS: dict[str, tuple[type, tuple | None]] = {
    p.name: (bool if bool in p.kind else int if int in p.kind else str, p.cli if isinstance(p.cli, tuple) else None)
    for p in SURFACE if p.cli}
@dataclass(frozen=True)
class RunSpec:
    """One evaluation run: its five parts, where it is written (``out_dir``), whether it prints progress,
    retries failed items, and the caller's own ``parameters`` (recorded as given)."""

    task: TaskSpec
    out_dir: str | Path = _f(None, (str, Path), "the run folder")
    model: ModelSpec = field(default_factory=ModelSpec)
    generation: GenerationSpec = field(default_factory=GenerationSpec)
    selection: SelectionSpec = field(default_factory=SelectionSpec)
    judges: JudgeSpec = field(default_factory=JudgeSpec)
    progress: bool = _f(True, (bool,), "print progress lines")
    retry_failed: bool = _f(True, (bool,), "a resumed run scores its failed items again (false keeps them failed)")
    parameters: dict = _f(kind=(dict,), factory=dict, doc="the caller's own parameters, recorded as given")

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
        _types("run", self)
        if not str(self.out_dir).strip():
            raise ValueError("run.out_dir: give the run folder (empty)")
        task, model, gen = self.task, self.model, self.generation
        generates = protocol_for(task.benchmark).generates
        why = ranking_refusal(get_task(task.benchmark).protocol, model.chat_template_kwargs)
        if why:  # tasks/thinking.py, on the parsed switches: "true", 1 and true alike
            raise ValueError(f"model.chat_template_kwargs: {why}")
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
        return cls.from_params(**{**from_manifest(man).params, **params})

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
        m, names = self.model, {f.name for f in fields(ModelSpec)}
        load = {k: getattr(m, k) for k in LOAD_OPTIONS if k in names}  # the model part's fields the loader takes
        settings = {"settings": self.model_settings()} if self.model_settings() else {}
        return {**load, "scorer": self.generation.scorer, **settings, **m.engine_options}

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
            "task": {**_values(t), "data": data, "recipe": None if self.generates else t.recipe},
            "model": {**_values(m, identity=True), "engine": {k: v for k, v in m.engine_options.items()
                                                              if k in RESULT_OPTIONS}},
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


#: the run's own fields: where it is written and how it reports (never part of the identity)
RUN_FIELDS = tuple(f.name for f in fields(RunSpec) if f.name not in PARTS)
SURFACE += tuple(Param(f.name, "run", f.name, f.metadata["kind"], None, f.metadata["doc"])
                 for f in fields(RunSpec) if f.name in RUN_FIELDS)


def identity_hash(identity: dict) -> str:
    """A stable hash of an identity dict (sorted keys, JSON)."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()


def run_params(man: dict) -> dict:
    """The flat parameters of a run from its manifest, flattened through :data:`FLAT`: the independent check of
    ``core.record.flat_params`` (what every reader uses, ``from_manifest(man).params``; tests/core/test_record.py)."""
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
