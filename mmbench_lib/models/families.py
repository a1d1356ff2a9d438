"""Vision-language families that need more than the generic ``ImageTextToText`` path.

More: docs/modules.md, ``mmbench_lib/models/families.py``.
"""
from __future__ import annotations

from mmbench_lib.core.requests import IMAGE, Video
from mmbench_lib.models.batching import stop_ids
from mmbench_lib.models.family_records import check_refused, record_of, types_with
from mmbench_lib.models.hf import ImageTextToText
from mmbench_lib.scoring.reference import LAST
from mmbench_lib.scoring import hf_internals


class FamilyImageTextToText(ImageTextToText):
    """``ImageTextToText`` with a family's image text, image limit and clear processor errors."""

    family = "generic"
    image_text: str | None = None  # how one image is written in a plain (non-chat) prompt
    max_images: int | None = None  # None: as many as the processor accepts
    interleave = True  # False: images always go first, markers are removed
    drop_inputs: tuple[str, ...] = ()  # processor outputs the model must not get (e.g. labels)
    #: why the shared-prefix engine cannot run this family (None: it can); the reference scorer is then used
    engine_unsupported: str | None = None
    nested_images = False  # the processor takes a batch's images as one list per text

    @property
    def native_video(self) -> bool:
        """Generic-path families with a native video path (``NATIVE_VIDEO_TYPES``); Qwen2-VL sets its own."""
        return family_of(self.model) in NATIVE_VIDEO_TYPES

    def __init__(self, model, processor, name, scorer="reference", **kw):
        self.record = record = record_of(model)  # the family record: paths not taken, image batching
        self.engine_unsupported = self.engine_unsupported or record.engine_unsupported
        self.batch_unsupported = self.batch_unsupported or record.batch_unsupported
        self.nested_images = self.nested_images or record.images == "nested"
        model.position_base = 1 if record.positions == "1-based" else 0  # read by the shared-prefix engine
        self.requested_scorer = scorer
        if self.engine_unsupported and scorer != "reference":
            scorer = "reference"
        super().__init__(model, processor, name, scorer=scorer, **kw)

    def _check_images(self, images):
        if self.max_images is not None and len(images) > self.max_images:
            raise ValueError(
                f"{self.family} takes at most {self.max_images} image(s) per prompt, got {len(images)}"
            )

    def _plain_text(self, content, n_images) -> str:
        token = self.image_text if self.image_text is not None else self.processor.image_token
        sep = "\n" if n_images == 1 and self.image_text is None else ""
        return "".join(c["text"] if c["type"] == "text" else self._video_text() if c["type"] == "video" else token + sep
                       for c in content)

    def _family_text(self, prompt, images, chat, video=None) -> str:
        self._check_images(images)
        if not self.interleave:
            prompt = prompt.replace(IMAGE, "")
        content = self._segments(prompt, images, video)
        if chat and getattr(self.processor, "chat_template", None):
            return self.processor.apply_chat_template(
                self.settings.messages(content), tokenize=False, add_generation_prompt=True,
                **self.settings.chat_template_kwargs)
        return self._plain_text(content, len(images))

    def prefix_inputs(self, prompt, images, chat, generation=False, video=None):
        images = list(images)
        return self._encode(self._family_text(prompt, images, chat, video), images, video)

    def render(self, r):
        images, video = list(r.images), self.video_kw(r).get("video")
        media = ([video] if video is not None else []) + images
        return self._family_text(r.prompt, images, r.chat, video), media, ("video" if video is not None else None)

    def _encode(self, text, images, video=None) -> dict:
        return self._process(text=text, images=images or None, n_images=len(images), **self._videos([video]))

    def encode_batch(self, texts, images, key=None):
        """One processor call for the batch: left padding, each row's images (nested per row where the
        processor wants that), each row's clip as one video."""
        stills = [[m for m in row if not isinstance(m, Video)] for row in images]
        batch_images = [list(row) for row in stills] if self.nested_images else [im for row in stills for im in row]
        if not any(stills):
            batch_images = None
        return self._process(text=texts, images=batch_images, n_images=sum(len(row) for row in stills),
                             padding=True, padding_side="left", **self._videos(self._split_media(images)[1]))

    def _process(self, n_images, **kw) -> dict:
        try:
            enc = self.processor(return_tensors="pt", **kw, **self.settings.processor_kwargs)
        except Exception as e:  # noqa: BLE001 - re-raised with the cause named
            raise ValueError(
                f"{self.family} processor ({type(self.processor).__name__}) rejected a prompt with "
                f"{n_images} image(s): {type(e).__name__}: {e}"
            ) from e
        enc = {k: v for k, v in dict(enc).items() if k not in self.drop_inputs}
        return self._to_device(enc)

    def describe(self) -> dict:
        d = {**super().describe(), "family": self.family, "family_record": self.record.name}
        if not self.interleave:  # recorded in every run's manifest: the prompt layout differs from the text
            d["image_placement"] = "images before the text; image markers in the prompt are removed"
        if self.requested_scorer != self.scorer.name:
            d["scorer_note"] = f"{self.requested_scorer!r} requested; {self.engine_unsupported}: reference scorer used"
        return d


class Qwen2VL(FamilyImageTextToText):
    """Qwen2-VL / Qwen2.5-VL: ``image_grid_thw`` and M-RoPE (module doc)."""

    family = "qwen2-vl"
    image_text = "<|vision_start|><|image_pad|><|vision_end|>"
    native_video = True  # ``<|video_pad|>`` + ``video_grid_thw``: the clip's frames in temporal patches of 2

    def _video_text(self) -> str:
        return "<|vision_start|><|video_pad|><|vision_end|>"

    def drop_rows(self, index) -> None:
        """Batched generation: keep the M-RoPE ``rope_deltas`` (one per row, from the prefill) of the rows left."""
        hf_internals.select_rope_rows(self.model, index)


class Glm4V(Qwen2VL):
    """GLM-4.1V / 4.5V: Qwen2-VL's M-RoPE and ``rope_deltas`` (``get_rope_index`` over ``mm_token_type_ids``), its own
    image markers; a SEED video's frames go as images (its native video path, timestamps between frames, is not tested
    here)."""

    family = "glm4v"
    image_text = "<|begin_of_image|><|image|><|end_of_image|>"
    native_video = False


class PaliGemma(FamilyImageTextToText):
    """PaliGemma: prefix-LM ``token_type_ids`` (choices are suffix: 1), images first, no chat."""

    family = "paligemma"
    interleave = False
    drop_inputs = ("labels",)  # the processor returns all -100 labels for the prefix

    def _family_text(self, prompt, images, chat, video=None) -> str:
        self._check_images(images)
        return self.processor.image_token * len(images) + prompt.replace(IMAGE, "")  # the processor adds BOS and "\n"

    def extend_rules(self) -> dict:
        return {"attention_mask": 1, "token_type_ids": 1}


class Blip2Decoder(FamilyImageTextToText):
    """BLIP-2 with a decoder-only LM (OPT): query tokens first (added by the processor), one image."""

    family = "blip2"
    interleave = False
    max_images = 1
    row_drop_unsupported = ("Blip2ForConditionalGeneration.generate needs pixel_values and cannot continue from a "
                            "kept cache, so each batch is one generate call")

    def stops(self) -> set[int]:
        return stop_ids(self.model.language_model, self.tokenizer)  # its generate runs the LM's own generate

    def _family_text(self, prompt, images, chat, video=None) -> str:
        self._check_images(images)
        return prompt.replace(IMAGE, "")


class Mllama(FamilyImageTextToText):
    """Llama 3.2 Vision: the text reads the images through cross-attention layers; ``cross_attention_mask``
    [batch, tokens, images, tiles] says which image tiles each token sees. A choice token sees what the prompt's
    last token sees (as ``generate`` extends it for new tokens)."""

    family = "mllama"

    def extend_rules(self) -> dict:
        return {**super().extend_rules(), "cross_attention_mask": LAST}


#: generic-path families whose processor takes a clip through ``videos=`` and a ``<video>`` token (family records)
NATIVE_VIDEO_TYPES = types_with(adapter="generic", video="native")


def family_of(model) -> str:
    """The family name of a loaded transformers model (its config's ``model_type``)."""
    return getattr(model.config, "model_type", "")


#: family record ``adapter`` -> adapter class
ADAPTERS = {"qwen2-vl": Qwen2VL, "glm4v": Glm4V, "paligemma": PaliGemma, "blip2-decoder": Blip2Decoder, "mllama": Mllama}


def make_image_text_adapter(model, processor, name, **kw):
    """The adapter class for a loaded image-text model, as its family record says; a refused family
    stops here with its reason."""
    check_refused(model)
    record = record_of(model)
    cls = ADAPTERS.get(record.adapter, FamilyImageTextToText)
    adapter = cls(model, processor, name, **kw)
    if cls is FamilyImageTextToText:
        adapter.family = family_of(model) or "generic"
    return adapter


__all__ = ["FamilyImageTextToText", "Qwen2VL", "Glm4V", "PaliGemma", "Blip2Decoder", "Mllama", "make_image_text_adapter"]
