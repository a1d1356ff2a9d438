"""Registered loaders of the local model families (see ``mmbench_lib.models.registry``).

Each imports torch / transformers only when called. ``load_built`` serves models built in code (the tiny
random-weight ones here, a plugin's own: docs/models.md).
"""
from __future__ import annotations

from mmbench_lib.core.progress import library_bars
from mmbench_lib.models import embedded
from mmbench_lib.models.adapters import image_text_adapter
from mmbench_lib.models.registry import DESCRIPTIONS, register_model
from mmbench_lib.models.family_records import check_refused


def _dtype(placement, dtype, said: str | None = None):
    from mmbench_lib.models.hf import pick_device, pick_dtype

    return pick_dtype(dtype, pick_device(placement.device), said)


def _checkpoint_dtype(target, **kw) -> str | None:
    """The dtype a checkpoint's config names (``dtype`` / ``torch_dtype``), None where it names none or cannot be read."""
    from transformers import AutoConfig

    try:
        cfg = AutoConfig.from_pretrained(target, **{k: v for k, v in kw.items() if k in ("revision", "trust_remote_code")})
    except Exception:  # noqa: BLE001 - no config to read: the device's default
        return None
    said = getattr(cfg, "dtype", None) or getattr(cfg, "torch_dtype", None)
    return str(said).replace("torch.", "") if said is not None else None


def _pretrained(model_class, target, placement, dtype, **kw):
    """``from_pretrained`` on one device (moved there) or dispatched by accelerate (``placement.load_kwargs``)."""
    library_bars()  # "Loading weights" as text outside a live notebook, never a widget frozen in a saved one
    from mmbench_lib.models.hf import pick_device

    gpu = pick_device(placement.device).startswith("cuda")
    said = _checkpoint_dtype(target, **kw) if gpu and dtype in (None, "auto") else None  # the CPU: fp32 regardless
    model = model_class.from_pretrained(target, dtype=_dtype(placement, dtype, said), **placement.load_kwargs(), **kw)
    return placement.finish(model)


def _built(model, placement, dtype):
    """A model built from a config (random weights): cast to ``dtype``, then placed."""
    return placement.dispatch(model.to(_dtype(placement, dtype)))


@register_model("smollm2")
def load_smollm2(target, *, placement, dtype, scorer, append_eos, **_):
    """The embedded SmolLM2-135M-Instruct (text only; the blind LLM baseline)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from mmbench_lib.models.hf import HFCausalLM

    path = embedded.converted_dir()
    model = _pretrained(AutoModelForCausalLM, path, placement, dtype)
    info = {"model_id": embedded.MODEL_ID, "gguf": str(embedded.gguf_path())}
    return HFCausalLM(model, AutoTokenizer.from_pretrained(path), "smollm2", info=info, scorer=scorer,
                      append_eos=append_eos)


@register_model("causal", needs_target=True)
def load_causal(target, *, placement, dtype, scorer, revision, trust_remote_code, append_eos, **_):
    """Any transformers causal LM, text only."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from mmbench_lib.models.hf import HFCausalLM

    kw = {"revision": revision, "trust_remote_code": trust_remote_code}
    model = _pretrained(AutoModelForCausalLM, target, placement, dtype, **kw)
    tok = AutoTokenizer.from_pretrained(target, **kw)
    info = {"model_id": target, "revision": revision, "trust_remote_code": trust_remote_code}
    return HFCausalLM(model, tok, target, info=info, scorer=scorer, append_eos=append_eos)


@register_model("vlm", "blip2", "instructblip", needs_target=True)
def load_image_text(target, *, prefix, placement, dtype, scorer, revision, trust_remote_code, append_eos, **_):
    """``vlm:``: AutoModelForImageTextToText (family detected from the config); ``blip2:`` /
    ``instructblip:``: BLIP-2 / InstructBLIP through their own classes."""
    import transformers
    from transformers import AutoProcessor

    model_class = {
        "vlm": transformers.AutoModelForImageTextToText,
        "blip2": transformers.Blip2ForConditionalGeneration,
        "instructblip": transformers.InstructBlipForConditionalGeneration,
    }[prefix]
    kw = {"revision": revision, "trust_remote_code": trust_remote_code}
    check_refused(transformers.AutoConfig.from_pretrained(target, **kw))  # before any weights are read
    model = _pretrained(model_class, target, placement, dtype, **kw)
    processor = AutoProcessor.from_pretrained(target, **kw)
    info = {"model_id": target, "revision": revision, "trust_remote_code": trust_remote_code,
            "model_class": type(model).__name__}
    return image_text_adapter(model, processor, target, info=info, scorer=scorer, append_eos=append_eos)


@register_model("tiny-llava")
def load_tiny_llava(target, *, placement, dtype, scorer, append_eos, **_):
    """A random-weight LLaVA (tests, demos of the code path)."""
    from mmbench_lib.models.hf import ImageTextToText
    from mmbench_lib.models.tiny import tiny_llava

    model, processor = tiny_llava()
    info = {"model_id": "tiny random-weight LlavaForConditionalGeneration (tests only)"}
    return ImageTextToText(_built(model, placement, dtype), processor, "tiny-llava", info=info, scorer=scorer,
                           append_eos=append_eos)


def load_built(built, name, *, placement, dtype, scorer, append_eos, trust_remote_code=False, model_id=None, **_):
    """The adapter of a ``(model, processor)`` pair built in code (random weights from a config): cast to ``dtype``,
    placed, its family's adapter (``family_records``). A plugin's loader returns it (docs/models.md)."""
    model, processor = built
    info = {"model_id": model_id or f"tiny random-weight {type(model).__name__} (tests only)",
            "trust_remote_code": trust_remote_code}
    return image_text_adapter(_built(model, placement, dtype), processor, name, info=info, scorer=scorer,
                              append_eos=append_eos)


@register_model("tiny-qwen2-vl")
def load_tiny_qwen2_vl(target, *, prefix, **options):
    """A random-weight Qwen2-VL (M-RoPE, native video; demos of the code path)."""
    from mmbench_lib.models.tiny import tiny_qwen2_vl

    return load_built(tiny_qwen2_vl(), prefix, **options)


DESCRIPTIONS.update({
    "vlm": "any image-text-to-text model via AutoModelForImageTextToText and its processor; its config's model_type "
           "picks the family record (table below)",
    "blip2": "BLIP-2 through Blip2ForConditionalGeneration (T5: encoder-decoder scoring; OPT: decoder-only)",
    "instructblip": "InstructBLIP through InstructBlipForConditionalGeneration (T5 or Vicuna language model)",
    "tiny-qwen2-vl": "random-weight qwen2-vl model built from a config (tests and plumbing demos, not accuracy)",
})
