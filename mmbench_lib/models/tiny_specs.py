"""The ``tiny-<family>`` specs (no torch import here, so registering them is free)."""
from __future__ import annotations

#: ``tiny-<family>`` specs: builder in ``mmbench_lib.models.tiny`` and its arguments
TINY_FAMILIES = {
    "tiny-llava-next": ("tiny_llava_next", {}),
    "tiny-llava-onevision": ("tiny_llava_onevision", {}),
    "tiny-llava-next-video": ("tiny_llava_next_video", {}),
    "tiny-qwen2-vl": ("tiny_qwen2_vl", {}),
    "tiny-qwen2.5-vl": ("tiny_qwen2_vl", {"v2_5": True}),
    "tiny-qwen3-vl": ("tiny_qwen3_vl", {}),
    "tiny-qwen3-vl-moe": ("tiny_qwen3_vl", {"moe": True}),
    "tiny-glm4v": ("tiny_glm4v", {}),
    "tiny-glm4v-moe": ("tiny_glm4v", {"moe": True}),
    "tiny-gemma3": ("tiny_gemma3", {}),
    "tiny-mllama": ("tiny_mllama", {}),
    "tiny-idefics3": ("tiny_idefics3", {}),
    "tiny-internvl": ("tiny_internvl", {}),
    "tiny-smolvlm": ("tiny_smolvlm", {}),
    "tiny-mistral3": ("tiny_mistral3", {}),
    "tiny-pixtral": ("tiny_mistral3", {"pixtral_llava": True}),
    "tiny-paligemma": ("tiny_paligemma", {}),
    "tiny-blip2-t5": ("tiny_blip2", {"language": "t5"}),
    "tiny-blip2-opt": ("tiny_blip2", {"language": "opt"}),
    "tiny-instructblip-t5": ("tiny_instructblip", {}),
}
