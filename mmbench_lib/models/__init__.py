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

from mmbench_lib.core.requests import IMAGE, Adapter, ChoiceScore, Generation, GenerateRequest, ScoreRequest  # noqa: F401
from mmbench_lib.models import loaders  # noqa: F401 - registers the local families
from mmbench_lib.models.adapters import image_text_adapter  # noqa: F401
from mmbench_lib.models.placement import Placement, device_map_problem, max_memory_problem
from mmbench_lib.models.openai_compat import OpenAICompatible  # noqa: F401 - registers openai:
from mmbench_lib.models.random_choice import RandomChoice  # noqa: F401 - registers random
from mmbench_lib.models.vllm import VLLMAdapter  # noqa: F401 - registers vllm:
from mmbench_lib.models.registry import MODEL_REGISTRY, check_spec, load_plugins, register_model, split_spec  # noqa: F401

load_plugins()  # models registered outside the library ($MMBENCH_PLUGINS)

#: options every local family's loader takes (an endpoint family takes ``**endpoint`` instead)
LOCAL_OPTIONS = ("device", "dtype", "scorer", "revision", "trust_remote_code", "append_eos", "placement")


def load_adapter(spec, device: str = "auto", dtype: str | None = None, scorer: str = "reference",
                 revision: str | None = None, trust_remote_code: bool = False, append_eos: bool = False,
                 device_map=None, max_memory: dict | None = None, settings=None, **endpoint):
    """Build an adapter from a spec string (see module doc) or return an adapter unchanged.
    ``device_map`` / ``max_memory`` spread a local model over devices (``models.placement``).
    ``endpoint`` keywords (base_url, api_key_env, concurrency, max_retries, timeout, ...) go to ``openai:`` and
    ``vllm:`` (with its server options); ``vllm:`` also takes dtype, revision, trust_remote_code, append_eos.
    The family is looked up by the spec's prefix in ``MODEL_REGISTRY`` (``register_model``).
    ``settings`` (``models.settings.ModelSettings``): applied to the adapter built."""
    if not isinstance(spec, str):
        return spec
    family = check_spec(spec)
    prefix, target = split_spec(spec)
    if family.endpoint:
        local = {"dtype": dtype, "revision": revision, "trust_remote_code": trust_remote_code, "append_eos": append_eos}
        return family.loader(target, **{k: local[k] for k in family.settings}, **endpoint)
    if endpoint:
        raise ValueError(f"endpoint options {sorted(endpoint)} apply only to openai:<model> and vllm:<model> specs")
    for name, why in (("device_map", device_map_problem(device_map)), ("max_memory", max_memory_problem(max_memory, device_map))):
        if why:
            raise ValueError(f"{name}: {why}")
    adapter = family.loader(target, prefix=prefix, device=device, dtype=dtype, scorer=scorer, revision=revision,
                            trust_remote_code=trust_remote_code, append_eos=append_eos,
                            placement=Placement(device, device_map, max_memory))
    if settings:
        if not hasattr(adapter, "settings"):
            raise ValueError(f"model settings {settings.describe()} apply to local transformers models, not {spec!r}")
        if settings.processor_kwargs and getattr(adapter, "processor", None) is None:
            raise ValueError(f"processor_kwargs {settings.processor_kwargs} need a model with a processor, not {spec!r}")
        adapter.settings = settings
    return adapter
