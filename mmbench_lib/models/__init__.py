"""Model adapters by name.

``load_adapter(spec)`` accepts:
- ``"smollm2"``: the embedded SmolLM2-135M-Instruct (text only; the blind LLM baseline);
- ``"random"`` or ``"random:<seed>"``: the Random Choice baseline;
- ``"causal:<hub id or path>"``: any transformers causal LM, text only;
- ``"vlm:<hub id or path>"``: an image-text-to-text model via AutoModelForImageTextToText and
  AutoProcessor; the family is detected from the config (LLaVA, LLaVA-NeXT, LLaVA-OneVision,
  Idefics3/SmolVLM: generic path; Qwen2-VL/2.5-VL, PaliGemma, BLIP-2/InstructBLIP: the
  family adapters of ``families`` and ``encdec``);
- ``"blip2:<id>"``, ``"instructblip:<id>"``: BLIP-2 / InstructBLIP through their own classes
  (T5 language model: encoder-decoder scoring; OPT/Vicuna: decoder-only);
- ``"tiny-<family>"``: random-weight models built from configs (tests, demos of the code path):
  ``tiny-llava``, ``tiny-llava-next``, ``tiny-llava-next-video``, ``tiny-llava-onevision``, ``tiny-qwen2-vl``,
  ``tiny-qwen2.5-vl``, ``tiny-qwen3-vl``, ``tiny-qwen3-vl-moe``, ``tiny-gemma3``, ``tiny-mllama``, ``tiny-idefics3``, ``tiny-paligemma``, ``tiny-blip2-t5``,
  ``tiny-blip2-opt``, ``tiny-instructblip-t5``.

- ``"openai:<served model name>"``: an OpenAI-compatible endpoint (vLLM, SGLang, ...) at
  ``base_url`` (or ``$OPENAI_BASE_URL``), key from ``$OPENAI_API_KEY``; generation, and ranking on vLLM.
- ``"vllm:<model>"`` (``vllm:smollm2``, a hub id or a folder): a vLLM server started from ``.venv-vllm``
  (or ``base_url``) for ranking and generation (``mmbench_lib.models.vllm``).

Families register themselves with ``register_model`` (``mmbench_lib.models.registry``).

``trust_remote_code`` stays off unless the caller turns it on; every hub path passes it to both
the model and the processor and records it in ``describe()``.
"""
from __future__ import annotations

from mmbench_lib.core.requests import IMAGE, Adapter, ChoiceScore, Generation, GenerateRequest, ScoreRequest  # noqa: F401
from mmbench_lib.models import loaders  # noqa: F401 - registers the local families
from mmbench_lib.models.adapters import image_text_adapter  # noqa: F401
from mmbench_lib.models.placement import Placement, device_map_problem, max_memory_problem
from mmbench_lib.models.openai_compat import OpenAICompatible  # noqa: F401 - registers openai:
from mmbench_lib.models.random_choice import RandomChoice  # noqa: F401 - registers random
from mmbench_lib.models.vllm import VLLMAdapter  # noqa: F401 - registers vllm:
from mmbench_lib.models.registry import MODEL_REGISTRY, check_spec, register_model, split_spec  # noqa: F401
from mmbench_lib.models.tiny_specs import TINY_FAMILIES  # noqa: F401

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
