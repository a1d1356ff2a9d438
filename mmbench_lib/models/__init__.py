"""Model adapters by name.

``load_adapter(spec)`` accepts:
- ``"smollm2"``: the embedded SmolLM2-135M-Instruct (text only; the blind LLM baseline);
- ``"random"`` or ``"random:<seed>"``: the Random Choice baseline;
- ``"causal:<hub id or path>"``: any transformers causal LM, text only;
- ``"vlm:<hub id or path>"``: an image-text-to-text model (LLaVA-1.5 style) via AutoProcessor;
- ``"tiny-llava"``: a random-weight LLaVA built from a config (tests, demos of the code path).
"""
from __future__ import annotations

from .base import IMAGE, Adapter, ChoiceScore, Generation, GenerateRequest, ScoreRequest  # noqa: F401
from .random_choice import RandomChoice


def load_adapter(spec, device: str = "auto", dtype: str | None = None, scorer: str = "reference",
                 revision: str | None = None, trust_remote_code: bool = False, append_eos: bool = False):
    """Build an adapter from a spec string (see module doc) or return an adapter unchanged."""
    if not isinstance(spec, str):
        return spec
    from .hf import HFCausalLM, ImageTextToText, pick_device, pick_dtype

    kind, _, target = spec.partition(":")
    if kind == "random":
        return RandomChoice(seed=int(target or 0))
    dev = pick_device(device)
    torch_dtype = pick_dtype(dtype, dev)
    common = {"scorer": scorer, "append_eos": append_eos}
    if kind == "smollm2":
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from . import embedded

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
    if kind == "vlm":
        from transformers import AutoModelForImageTextToText, AutoProcessor

        kw = {"revision": revision, "trust_remote_code": trust_remote_code}
        model = AutoModelForImageTextToText.from_pretrained(target, dtype=torch_dtype, **kw).to(dev)
        processor = AutoProcessor.from_pretrained(target, **kw)
        info = {"model_id": target, "revision": revision, "trust_remote_code": trust_remote_code}
        return ImageTextToText(model, processor, target, info=info, **common)
    if kind == "tiny-llava":
        from .tiny import tiny_llava

        model, processor = tiny_llava()
        info = {"model_id": "tiny random-weight LlavaForConditionalGeneration (tests only)"}
        return ImageTextToText(model.to(dev), processor, "tiny-llava", info=info, **common)
    raise ValueError(f"unknown model spec {spec!r}; use smollm2, random[:seed], causal:<id>, vlm:<id> or tiny-llava")
