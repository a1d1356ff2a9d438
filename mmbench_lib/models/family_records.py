"""One record per model family: what the suite knows about it, in one place.

Every ``model_type`` decision outside this module reads a record (``record_for``): which adapter
class serves the family (``families.make_image_text_adapter``, ``adapters.image_text_adapter``), how
its positions work (the shared-prefix engine's position base and M-RoPE, ``scoring.engine``), how a
batch's images reach its processor, whether video goes in natively, and which fast paths it may take
(shared-prefix scoring, kv-decode generation, end-to-end text prefill), each with the reason where
not. A ``model_type`` without a record goes through the generic image-text path (reference-tested
paths only: ``GENERIC``). A record with ``refused`` set stops a run before it starts.

Adding a family (docs/adding_a_family.md): one record here plus, where needed, one adapter class
(``families``), a tiny builder in ``tests/tiny_models.py`` and its spec in ``tests/models/test_more_families.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

NOT_TESTED_KV = "kv-decode (plain 1-D positions, plain cache) is not tested on this family"
NOT_TESTED_FLAT = "end-to-end prefill is tested on text decoder families only"


@dataclass(frozen=True)
class FamilyRecord:
    """A model family. A ``*_unsupported`` field holds why that path is not used (None: it is)."""

    name: str
    model_types: tuple[str, ...]
    kind: str = "vision"  # "text" (causal LM), "vision" (image-text decoder), "encdec" (T5 decoder)
    adapter: str = "generic"  # "generic", "qwen2-vl", "glm4v", "paligemma", "blip2-decoder", "blip2-encdec", "causal"
    positions: str = "plain"  # "plain", "1-based", "m-rope", "cross-attention"
    images: str = "flat"  # how a batch's images go to the processor: "flat" list, "nested" per row, "one" per prompt
    video: str = "frames"  # "native" (videos=, one clip) or "frames" (sent as images)
    engine_unsupported: str | None = None  # shared-prefix scoring engine
    batch_unsupported: str | None = None  # batched generation (then one generate call per request)
    kv_unsupported: str | None = NOT_TESTED_KV
    flat_unsupported: str | None = NOT_TESTED_FLAT
    refused: str | None = None  # why the suite refuses the family before a run
    tiny: tuple[str, ...] = ()  # the tiny specs its equality tests run on

    @property
    def scoring_path(self) -> str:
        if self.kind == "encdec":
            return "encdec-batched"
        return "reference" if self.engine_unsupported else "shared-prefix"

    @property
    def generation_path(self) -> str:
        if self.batch_unsupported:
            return "one at a time"
        if self.kv_unsupported is None:
            return "kv-decode" + (" + flat prefill" if self.flat_unsupported is None else "")
        return "batched generate"


RECORDS: tuple[FamilyRecord, ...] = (
    FamilyRecord("text decoders", ("llama", "mistral", "qwen2", "qwen3", "phi3", "olmo", "olmo2", "granite", "gemma"),
                 kind="text", adapter="causal", video="none", kv_unsupported=None, flat_unsupported=None,
                 tiny=("smollm2",)),
    FamilyRecord("StableLM", ("stablelm",), kind="text", adapter="causal", video="none", kv_unsupported=None,
                 flat_unsupported="its decoder layer drops the forward's arguments before attention"),
    FamilyRecord("LLaVA / LLaVA-NeXT / Pixtral", ("llava", "llava_next"), kv_unsupported=None,
                 tiny=("tiny-llava", "tiny-llava-next", "tiny-pixtral")),
    FamilyRecord("LLaVA-OneVision", ("llava_onevision",), video="native", kv_unsupported=None,
                 tiny=("tiny-llava-onevision",)),
    FamilyRecord("LLaVA-NeXT-Video", ("llava_next_video",), video="native", tiny=("tiny-llava-next-video",)),
    FamilyRecord("Idefics3 / SmolVLM", ("idefics3",), kv_unsupported=None, tiny=("tiny-idefics3",)),
    FamilyRecord("Qwen2-VL / Qwen2.5-VL", ("qwen2_vl", "qwen2_5_vl"), adapter="qwen2-vl", positions="m-rope",
                 video="native", tiny=("tiny-qwen2-vl", "tiny-qwen2.5-vl")),
    FamilyRecord("Qwen3-VL", ("qwen3_vl", "qwen3_vl_moe"), adapter="qwen2-vl", positions="m-rope", video="native",
                 tiny=("tiny-qwen3-vl", "tiny-qwen3-vl-moe")),
    FamilyRecord("Gemma 3", ("gemma3",), images="nested",
                 engine_unsupported="its sliding-window layers keep only the last sliding_window keys in the model's "
                                    "own cache, which the engine's stacked choice pass cannot address",
                 kv_unsupported="sliding-window attention needs the model's own cache", tiny=("tiny-gemma3",)),
    FamilyRecord("PaliGemma", ("paligemma",), adapter="paligemma", positions="1-based", tiny=("tiny-paligemma",)),
    FamilyRecord("BLIP-2 (OPT)", ("blip-2",), adapter="blip2-decoder", images="one",
                 engine_unsupported="Blip2ForConditionalGeneration.forward needs pixel_values on every call and "
                                    "keeps the LM cache inside language_model_outputs, so a cached choice pass is "
                                    "not possible", tiny=("tiny-blip2-opt",)),
    FamilyRecord("BLIP-2 / InstructBLIP (T5)", ("blip-2", "instructblip"), kind="encdec", adapter="blip2-encdec",
                 images="one", tiny=("tiny-blip2-t5", "tiny-instructblip-t5")),
    FamilyRecord("Llama 3.2 Vision", ("mllama",), adapter="mllama", positions="cross-attention", images="nested",
                 engine_unsupported="its cross-attention layers cache each prompt's image tiles, whose number differs "
                                    "between questions, so the engine cannot stack the prompts' caches",
                 tiny=("tiny-mllama",)),
    FamilyRecord("InternVL", ("internvl",), kv_unsupported=None, tiny=("tiny-internvl",)),
    FamilyRecord("SmolVLM2", ("smolvlm",), images="nested", kv_unsupported=None, tiny=("tiny-smolvlm",)),
    FamilyRecord("Mistral3", ("mistral3",), kv_unsupported=None, tiny=("tiny-mistral3",)),
    FamilyRecord("GLM-4.1V / 4.5V", ("glm4v", "glm4v_moe"), adapter="glm4v", positions="m-rope",
                 kv_unsupported="M-RoPE: kv-decode feeds plain 1-D positions, the text after images needs rope_deltas",
                 tiny=("tiny-glm4v", "tiny-glm4v-moe")),
    # a family the suite cannot load through image-text-to-text: refused before its weights are read, with the reason
    FamilyRecord("Phi-4-multimodal", ("phi4_multimodal",),
                 refused="transformers registers it under AutoModelForCausalLM (Phi4MultimodalForCausalLM, image and "
                         "audio inputs), not AutoModelForImageTextToText, which vlm: loads"),
)

#: a ``model_type`` without a record: the generic image-text path, reference-tested paths only
GENERIC = FamilyRecord("generic", ())


def record_for(model_type: str, kind: str | None = None) -> FamilyRecord:
    """The record of a ``model_type`` (of ``kind`` where a model type has two, e.g. BLIP-2), else ``GENERIC``."""
    for r in RECORDS:
        if model_type in r.model_types and (kind is None or r.kind == kind):
            return r
    return GENERIC


def record_of(model) -> FamilyRecord:
    """The record of a loaded transformers model (BLIP-2 by its language model: decoder-only or T5)."""
    cfg = model.config
    mt = getattr(cfg, "model_type", "")
    if mt in ("blip-2", "instructblip"):
        return record_for(mt, "vision" if getattr(cfg, "use_decoder_only_language_model", False) else "encdec")
    return record_for(mt)


def types_with(**conditions) -> frozenset[str]:
    """The model types of every record whose fields equal ``conditions``, e.g. ``types_with(kind="text")``."""
    return frozenset(t for r in RECORDS if all(getattr(r, k) == v for k, v in conditions.items()) for t in r.model_types)


def check_refused(model_or_config) -> None:
    """``ValueError`` (one line) for a family the suite refuses to run; takes a loaded model or its config
    (the hub loader checks the config before reading any weights)."""
    cfg = getattr(model_or_config, "config", model_or_config)
    r = record_for(getattr(cfg, "model_type", ""))
    if r.refused:
        raise ValueError(f"{r.name} ({cfg.model_type}) is not supported: {r.refused}")


def table() -> list[str]:
    """``mmbench list models``'s family table: family, model types, scoring path, generation path, video."""
    rows = [("family", "model types", "positions", "scoring", "generation", "video", "refused")]
    for r in RECORDS:
        paths = ("-", "-", "-") if r.refused else (r.scoring_path, r.generation_path, r.video)
        rows.append((r.name, ", ".join(r.model_types), r.positions, *paths, r.refused or ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
