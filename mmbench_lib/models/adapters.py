"""The adapter class for a loaded image-text model."""
from __future__ import annotations

from mmbench_lib.models.family_records import record_of


def image_text_adapter(model, processor, name, **kw):
    """The adapter for a loaded image-text model: encoder-decoder BLIP-2/InstructBLIP, a family
    adapter where one is needed, else the generic ``ImageTextToText`` path."""
    if record_of(model).adapter == "blip2-encdec":
        from mmbench_lib.models.encdec import Blip2EncoderDecoder

        kw["append_eos"] = True  # T5 convention: </s> is part of the scored target (spec 1.4)
        return Blip2EncoderDecoder(model, processor, name, **kw)
    from mmbench_lib.models.families import make_image_text_adapter

    return make_image_text_adapter(model, processor, name, **kw)
