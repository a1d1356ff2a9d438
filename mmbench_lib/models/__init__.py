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
  ``tiny-llava``, ``tiny-llava-next``, ``tiny-llava-onevision``, ``tiny-qwen2-vl``,
  ``tiny-qwen2.5-vl``, ``tiny-idefics3``, ``tiny-paligemma``, ``tiny-blip2-t5``,
  ``tiny-blip2-opt``, ``tiny-instructblip-t5``.

- ``"openai:<served model name>"``: an OpenAI-compatible endpoint (vLLM, SGLang, ...) at
  ``base_url`` (or ``$OPENAI_BASE_URL``), key from ``$OPENAI_API_KEY``; generation only.

``trust_remote_code`` stays off unless the caller turns it on; every hub path passes it to both
the model and the processor and records it in ``describe()``.
"""
from __future__ import annotations

from mmbench_lib.core.requests import IMAGE, Adapter, ChoiceScore, Generation, GenerateRequest, ScoreRequest  # noqa: F401
from mmbench_lib.models.random_choice import RandomChoice
from mmbench_lib.models.openai_compat import OpenAICompatible
from mmbench_lib.models import embedded


def load_adapter(spec, device: str = "auto", dtype: str | None = None, scorer: str = "reference",
                 revision: str | None = None, trust_remote_code: bool = False, append_eos: bool = False,
                 **endpoint):
    """Build an adapter from a spec string (see module doc) or return an adapter unchanged.
    ``endpoint`` keywords (base_url, api_key_env, concurrency, max_retries, timeout) go to ``openai:``."""
    if not isinstance(spec, str):
        return spec
    if spec.startswith("openai:"):

        return OpenAICompatible(spec.partition(":")[2], **endpoint)
    if endpoint:
        raise ValueError(f"endpoint options {sorted(endpoint)} apply only to openai:<model> specs")
    from mmbench_lib.models.hf import HFCausalLM, ImageTextToText, pick_device, pick_dtype

    kind, _, target = spec.partition(":")
    if kind == "random":
        return RandomChoice(seed=int(target or 0))
    dev = pick_device(device)
    torch_dtype = pick_dtype(dtype, dev)
    common = {"scorer": scorer, "append_eos": append_eos}
    if kind == "smollm2":
        from transformers import AutoModelForCausalLM, AutoTokenizer


        path = embedded.converted_dir()
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype).to(dev)
        info = {"model_id": embedded.MODEL_ID, "gguf": str(embedded.gguf_path())}
        return HFCausalLM(model, AutoTokenizer.from_pretrained(path), "smollm2", info=info, **common)
    if kind == "causal":
        from transformers import AutoModelForCausalLM, AutoTokenizer

        kw = {"revision": revision, "trust_remote_code": trust_remote_code}
        model = AutoModelForCausalLM.from_pretrained(target, dtype=torch_dtype, **kw).to(dev)
        tok = AutoTokenizer.from_pretrained(target, **kw)
        info = {"model_id": target, "revision": revision, "trust_remote_code": trust_remote_code}
        return HFCausalLM(model, tok, target, info=info, **common)
    if kind in ("vlm", "blip2", "instructblip"):
        import transformers
        from transformers import AutoProcessor

        model_class = {
            "vlm": transformers.AutoModelForImageTextToText,
            "blip2": transformers.Blip2ForConditionalGeneration,
            "instructblip": transformers.InstructBlipForConditionalGeneration,
        }[kind]
        kw = {"revision": revision, "trust_remote_code": trust_remote_code}
        model = model_class.from_pretrained(target, dtype=torch_dtype, **kw).to(dev)
        processor = AutoProcessor.from_pretrained(target, **kw)
        info = {"model_id": target, "revision": revision, "trust_remote_code": trust_remote_code,
                "model_class": type(model).__name__}
        return image_text_adapter(model, processor, target, info=info, **common)
    if kind == "tiny-llava":
        from mmbench_lib.models.tiny import tiny_llava

        model, processor = tiny_llava()
        info = {"model_id": "tiny random-weight LlavaForConditionalGeneration (tests only)"}
        return ImageTextToText(model.to(dev), processor, "tiny-llava", info=info, **common)
    if kind in TINY_FAMILIES:
        from mmbench_lib.models import tiny

        builder, kwargs = TINY_FAMILIES[kind]
        model, processor = getattr(tiny, builder)(**kwargs)
        info = {"model_id": f"tiny random-weight {type(model).__name__} (tests only)",
                "trust_remote_code": trust_remote_code}
        return image_text_adapter(model.to(dev), processor, kind, info=info, **common)
    raise ValueError(
        f"unknown model spec {spec!r}; use smollm2, random[:seed], causal:<id>, vlm:<id>, blip2:<id>, "
        f"instructblip:<id>, tiny-llava or one of {sorted(TINY_FAMILIES)}"
    )


#: ``tiny-<family>`` specs: builder in ``mmbench_lib.models.tiny`` and its arguments
TINY_FAMILIES = {
    "tiny-llava-next": ("tiny_llava_next", {}),
    "tiny-llava-onevision": ("tiny_llava_onevision", {}),
    "tiny-qwen2-vl": ("tiny_qwen2_vl", {}),
    "tiny-qwen2.5-vl": ("tiny_qwen2_vl", {"v2_5": True}),
    "tiny-idefics3": ("tiny_idefics3", {}),
    "tiny-paligemma": ("tiny_paligemma", {}),
    "tiny-blip2-t5": ("tiny_blip2", {"language": "t5"}),
    "tiny-blip2-opt": ("tiny_blip2", {"language": "opt"}),
    "tiny-instructblip-t5": ("tiny_instructblip", {}),
}


def image_text_adapter(model, processor, name, **kw):
    """The adapter for a loaded image-text model: encoder-decoder BLIP-2/InstructBLIP, a family
    adapter where one is needed, else the generic ``ImageTextToText`` path."""
    config = model.config
    if getattr(config, "model_type", "") in ("blip-2", "instructblip") and not config.use_decoder_only_language_model:
        from mmbench_lib.models.encdec import Blip2EncoderDecoder

        kw["append_eos"] = True  # T5 convention: </s> is part of the scored target (spec 1.4)
        return Blip2EncoderDecoder(model, processor, name, **kw)
    from mmbench_lib.models.families import make_image_text_adapter

    return make_image_text_adapter(model, processor, name, **kw)
