"""The tiny random-weight models a user runs: ``tiny-llava`` (the demo's) and ``tiny-qwen2-vl`` (native video).

Real transformers classes built from configs, with the embedded SmolLM2 tokenizer (a real one) inside the
processors: the real code paths run on the CPU; with random weights their predictions mean nothing. The other
families' builders serve tests only and live in ``tests/tiny_models.py`` (registered through ``MMBENCH_PLUGINS``).
"""
from __future__ import annotations

import torch

from mmbench_lib.models import embedded

#: LLaVA-1.5's conversation format, with images and text kept in their given order
LLAVA_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}USER: {% elif message['role'] == 'assistant' %}ASSISTANT: {% endif %}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}<image>\n{% elif c['type'] == 'video' %}<video>\n"
    "{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}{% if message['role'] == 'user' %} {% endif %}{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)


def tiny_tokenizer(extra_tokens=("<image>",)):
    tok = embedded.load_tokenizer()
    tok.add_special_tokens({"additional_special_tokens": list(extra_tokens)})
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def tiny_llava(image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2, seed: int = 0):
    """A LlavaForConditionalGeneration with a 2-layer CLIP vision tower and a 2-layer Llama.

    ``(image_size / patch_size) ** 2`` image tokens per image (336/14 gives LLaVA-1.5's 576).
    Returns (model, processor).
    """
    from transformers import CLIPVisionConfig, LlamaConfig, LlavaConfig, LlavaForConditionalGeneration

    tok = tiny_tokenizer()
    image_token_id = tok.convert_tokens_to_ids("<image>")
    vision = CLIPVisionConfig(
        hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers, num_attention_heads=4,
        image_size=image_size, patch_size=patch_size, projection_dim=hidden,
    )
    text = LlamaConfig(
        vocab_size=len(tok), hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
    )
    config = LlavaConfig(
        vision_config=vision, text_config=text, image_token_index=image_token_id,
        image_seq_length=(image_size // patch_size) ** 2, vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).eval()
    return model, llava_processor(tok, image_size, patch_size)


def llava_processor(tok, image_size: int, patch_size: int):
    """A LLaVA-1.5 processor on ``tok``: CLIP preprocessing at ``image_size`` and LLaVA's chat template."""
    from transformers import CLIPImageProcessor, LlavaProcessor

    image_processor = CLIPImageProcessor(
        size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size},
    )
    return LlavaProcessor(
        image_processor=image_processor, tokenizer=tok, patch_size=patch_size,
        vision_feature_select_strategy="default", chat_template=LLAVA_CHAT_TEMPLATE,
        image_token="<image>", num_additional_image_tokens=1,
    )


# ---------------------------------------------------------------------------- Qwen2-VL
# Chat templates in the style of each family's real one, written for content lists (images and
# text in their given order), as the hub processors ship them.

#: LLaVA-OneVision and Qwen2-VL use ChatML; the image and video placeholders differ
_CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}IMAGE_PLACEHOLDER{% elif c['type'] == 'video' %}VIDEO_PLACEHOLDER{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
QWEN2_VL_CHAT_TEMPLATE = _CHATML.replace("IMAGE_PLACEHOLDER", "<|vision_start|><|image_pad|><|vision_end|>").replace(
    "VIDEO_PLACEHOLDER", "<|vision_start|><|video_pad|><|vision_end|>")


def tiny_qwen2_vl(patch_size: int = 4, hidden: int = 64, layers: int = 2, seed: int = 0, v2_5: bool = False):
    """Qwen2VLForConditionalGeneration (or Qwen2.5-VL) with M-RoPE and dynamic resolution; (model, processor).

    Images are resized to at most 32x32 pixels: (32 / 4 / 2) ** 2 = 16 image tokens each.
    """
    from transformers import Qwen2VLImageProcessor, Qwen2VLProcessor, Qwen2VLVideoProcessor

    if v2_5:
        from transformers import (
            Qwen2_5_VLConfig as Config, Qwen2_5_VLForConditionalGeneration as Model, Qwen2_5_VLProcessor as Processor,
        )
    else:
        from transformers import Qwen2VLConfig as Config, Qwen2VLForConditionalGeneration as Model
        Processor = Qwen2VLProcessor

    tok = tiny_tokenizer(("<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>", "<|im_start|>", "<|im_end|>"))
    head_dim = hidden // 4
    vision = {
        "depth": layers, "embed_dim": hidden, "hidden_size": hidden, "num_heads": 4, "patch_size": patch_size,
        "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3,
    }
    if v2_5:
        vision.update({"intermediate_size": hidden * 2, "out_hidden_size": hidden, "fullatt_block_indexes": [layers - 1],
                       "window_size": 4 * patch_size})
    text = {
        "vocab_size": len(tok), "hidden_size": hidden, "intermediate_size": hidden * 2, "num_hidden_layers": layers,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 4096,
        "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id, "pad_token_id": tok.pad_token_id,
        # M-RoPE: temporal, height and width sections of the rotary half-dimension
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                            "mrope_section": [head_dim // 4, head_dim // 8, head_dim // 8]},
    }
    ids = {name: tok.convert_tokens_to_ids(t) for name, t in (
        ("image_token_id", "<|image_pad|>"), ("video_token_id", "<|video_pad|>"),
        ("vision_start_token_id", "<|vision_start|>"), ("vision_end_token_id", "<|vision_end|>"))}
    config = Config(vision_config=vision, text_config=text, **ids)
    torch.manual_seed(seed)
    model = Model(config).eval()
    px = 32 * 32
    image_processor = Qwen2VLImageProcessor(
        patch_size=patch_size, merge_size=2, temporal_patch_size=2, min_pixels=px // 4, max_pixels=px,
        size={"shortest_edge": px // 4, "longest_edge": px},
    )
    video_processor = Qwen2VLVideoProcessor(  # frames resized like images: at most 32x32, 16 tokens per 2 frames
        patch_size=patch_size, merge_size=2, temporal_patch_size=2, min_pixels=px // 4, max_pixels=px,
        size={"shortest_edge": px // 4, "longest_edge": px}, cap_pixels_per_frame=True,
    )
    processor = Processor(
        image_processor=image_processor, tokenizer=tok, video_processor=video_processor,
        chat_template=QWEN2_VL_CHAT_TEMPLATE,
    )
    return model, processor
