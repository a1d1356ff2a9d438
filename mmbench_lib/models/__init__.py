"""Model adapters by name: ``load_adapter(spec)`` finds the family by the spec's prefix (``registry``).

- ``"smollm2"``: the embedded SmolLM2-135M-Instruct (text only; the blind LLM baseline);
- ``"random"`` or ``"random:<seed>"``: the Random Choice baseline;
- ``"causal:<hub id or path>"``: any transformers causal LM, text only;
- ``"vlm:<hub id or path>"``: AutoModelForImageTextToText and AutoProcessor, the family record picked by the
  config's ``model_type`` (``family_records``); ``"blip2:<id>"``, ``"instructblip:<id>"``: their own classes;
- ``"openai:<served model name>"``: an OpenAI-compatible endpoint; ``"vllm:<model>"``: a vLLM server it starts;
- ``"tiny-llava"``, ``"tiny-qwen2-vl"``: random-weight models built from configs (demos of the code path);
- whatever a plugin module named in ``$MMBENCH_PLUGINS`` registers (the tests' ``tests.tiny_models``).

``trust_remote_code`` stays off unless the caller turns it on; every hub path passes it to both the model and
the processor and records it in ``describe()``. The table of specs: docs/models.md (``tests/test_docs_tables.py``).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from mmbench_lib.core.requests import IMAGE, Adapter, ChoiceScore, Generation, GenerateRequest, ScoreRequest  # noqa: F401
from mmbench_lib.models import loaders  # noqa: F401 - registers the local families
from mmbench_lib.models.adapters import image_text_adapter  # noqa: F401
from mmbench_lib.models.placement import Placement, device_map_problem, max_memory_problem
from mmbench_lib.models.openai_compat import OpenAICompatible  # noqa: F401 - registers openai:
from mmbench_lib.models.random_choice import RandomChoice  # noqa: F401 - registers random
from mmbench_lib.models.vllm import VLLMAdapter  # noqa: F401 - registers vllm:
from mmbench_lib.models.registry import MODEL_REGISTRY, check_spec, load_plugins, register_model, split_spec  # noqa: F401

load_plugins()  # models registered outside the library ($MMBENCH_PLUGINS)


@dataclass(frozen=True)
class LoadOptions:
    """How ``load_adapter`` loads a model: the options every local family's loader takes (as keyword arguments,
    with ``placement`` for the last three; lm-evaluation-harness' model arguments are likewise the loader's own).
    An endpoint family takes the ones it declares (``Family.settings``) and its ``**endpoint`` options instead."""

    device: str = "auto"
    dtype: str | None = None
    scorer: str = "reference"
    revision: str | None = None
    trust_remote_code: bool = False
    append_eos: bool = False
    device_map: str | dict | None = None
    max_memory: dict | None = None

    def loader_args(self) -> dict:
        """A local family loader's keyword arguments: the options, the placement in one ``Placement``."""
        args = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("device_map", "max_memory")}
        return {**args, "placement": Placement(self.device, self.device_map, self.max_memory)}


#: the names of :class:`LoadOptions`
LOAD_OPTIONS = tuple(f.name for f in fields(LoadOptions))


def load_adapter(spec, settings=None, **options):
    """Build an adapter from a spec string (see module doc) or return an adapter unchanged.
    ``options``: :class:`LoadOptions` by name (``device_map`` / ``max_memory`` spread a local model over devices,
    ``models.placement``); any other keyword (base_url, api_key_env, concurrency, max_retries, timeout, ...) is an
    endpoint option of ``openai:`` and ``vllm:`` (with its server options); ``vllm:`` also takes dtype, revision,
    trust_remote_code, append_eos. The family is looked up by the spec's prefix in ``MODEL_REGISTRY``
    (``register_model``). ``settings`` (``models.settings.ModelSettings``): applied to the adapter built."""
    if not isinstance(spec, str):
        return spec
    family = check_spec(spec)
    prefix, target = split_spec(spec)
    load = LoadOptions(**{k: v for k, v in options.items() if k in LOAD_OPTIONS})
    endpoint = {k: v for k, v in options.items() if k not in LOAD_OPTIONS}
    if family.endpoint:
        return family.loader(target, **{k: getattr(load, k) for k in family.settings}, **endpoint)
    if endpoint:
        raise ValueError(f"endpoint options {sorted(endpoint)} apply only to openai:<model> and vllm:<model> specs")
    for name, why in (("device_map", device_map_problem(load.device_map)),
                      ("max_memory", max_memory_problem(load.max_memory, load.device_map))):
        if why:
            raise ValueError(f"{name}: {why}")
    adapter = family.loader(target, prefix=prefix, **load.loader_args())
    if settings:
        if not hasattr(adapter, "settings"):
            raise ValueError(f"model settings {settings.describe()} apply to local transformers models, not {spec!r}")
        if settings.processor_kwargs and getattr(adapter, "processor", None) is None:
            raise ValueError(f"processor_kwargs {settings.processor_kwargs} need a model with a processor, not {spec!r}")
        adapter.settings = settings
    return adapter
