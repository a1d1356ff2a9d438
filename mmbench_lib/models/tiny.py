"""Tiny random-weight models of real transformers classes, built from configs.

For tests and benchmarks on the CPU: the real model and processor code paths run, with the
embedded SmolLM2 tokenizer (a real one) inside the processors. Weights are random, so their
predictions mean nothing; only the plumbing and the arithmetic are under test.
"""
from __future__ import annotations

import torch

from . import embedded

#: LLaVA-1.5's conversation format, with images and text kept in their given order
LLAVA_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}USER: {% elif message['role'] == 'assistant' %}ASSISTANT: {% endif %}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
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
    from transformers import (
        CLIPImageProcessor, CLIPVisionConfig, LlamaConfig, LlavaConfig,
        LlavaForConditionalGeneration, LlavaProcessor,
    )

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
    image_processor = CLIPImageProcessor(
        size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size},
    )
    processor = LlavaProcessor(
        image_processor=image_processor, tokenizer=tok, patch_size=patch_size,
        vision_feature_select_strategy="default", chat_template=LLAVA_CHAT_TEMPLATE,
        image_token="<image>", num_additional_image_tokens=1,
    )
    return model, processor
