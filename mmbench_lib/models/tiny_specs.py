"""The ``tiny-<family>`` specs (no torch import here, so registering them is free)."""
from __future__ import annotations

#: ``tiny-<family>`` specs: builder in ``mmbench_lib.models.tiny`` and its arguments
TINY_FAMILIES = {
    "tiny-llava-next": ("tiny_llava_next", {}),
    "tiny-llava-onevision": ("tiny_llava_onevision", {}),
    "tiny-llava-next-video": ("tiny_llava_next_video", {}),
    "tiny-qwen2-vl": ("tiny_qwen2_vl", {}),
    "tiny-qwen2.5-vl": ("tiny_qwen2_vl", {"v2_5": True}),
    "tiny-idefics3": ("tiny_idefics3", {}),
    "tiny-paligemma": ("tiny_paligemma", {}),
    "tiny-blip2-t5": ("tiny_blip2", {"language": "t5"}),
    "tiny-blip2-opt": ("tiny_blip2", {"language": "opt"}),
    "tiny-instructblip-t5": ("tiny_instructblip", {}),
}
