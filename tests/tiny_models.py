"""Tiny random-weight models of every other family, for tests: registered as ``tiny-<family>`` specs.

Loaded as a model plugin (``MMBENCH_PLUGINS=tests.tiny_models``, set by ``tests/conftest.py``, inherited by the
``mmbench run`` processes and notebook kernels the tests start), the way a user registers their own models
(docs/models.md). Real transformers classes built from configs, with the embedded SmolLM2 tokenizer (or a tiny T5
one); weights are random (seed 0), so only the plumbing and the arithmetic are under test. The library keeps the
builders a user runs (``mmbench_lib.models.tiny``: ``tiny-llava``, ``tiny-qwen2-vl``).
"""
from __future__ import annotations

import torch

from mmbench_lib.models.loaders import load_built
from mmbench_lib.models.registry import DESCRIPTIONS, register_model
from mmbench_lib.models.tiny import _CHATML, LLAVA_CHAT_TEMPLATE, QWEN2_VL_CHAT_TEMPLATE, tiny_qwen2_vl, tiny_tokenizer

ONEVISION_CHAT_TEMPLATE = _CHATML.replace("IMAGE_PLACEHOLDER", "<image>\n").replace("VIDEO_PLACEHOLDER", "<video>\n")
#: Idefics3 / SmolVLM: "User:<image>question<end_of_utterance>\nAssistant:"
IDEFICS3_CHAT_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}:"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)


def _llama_text(tok, hidden, layers, **kw):
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=len(tok), hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, **kw,
    )


def _clip_vision(hidden, layers, image_size, patch_size):
    from transformers import CLIPVisionConfig

    return CLIPVisionConfig(
        hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers, num_attention_heads=4,
        image_size=image_size, patch_size=patch_size, projection_dim=hidden,
    )


def _siglip_vision(hidden, layers, image_size, patch_size):
    from transformers import SiglipVisionConfig

    return SiglipVisionConfig(
        hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers, num_attention_heads=4,
        image_size=image_size, patch_size=patch_size,
    )


def tiny_llava_next(image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2, seed: int = 0):
    """LlavaNextForConditionalGeneration (anyres tiling, ``image_sizes`` input); (model, processor)."""
    from transformers import (
        LlavaNextConfig, LlavaNextForConditionalGeneration, LlavaNextImageProcessor, LlavaNextProcessor,
    )

    tok = tiny_tokenizer()
    pinpoints = [[image_size, image_size], [image_size, 2 * image_size], [2 * image_size, image_size]]
    config = LlavaNextConfig(
        vision_config=_clip_vision(hidden, layers, image_size, patch_size), text_config=_llama_text(tok, hidden, layers),
        image_token_index=tok.convert_tokens_to_ids("<image>"), image_grid_pinpoints=pinpoints,
        vision_feature_select_strategy="default", vision_feature_layer=-1,
        image_seq_length=(image_size // patch_size) ** 2,
    )
    torch.manual_seed(seed)
    model = LlavaNextForConditionalGeneration(config).eval()
    image_processor = LlavaNextImageProcessor(
        size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size},
        image_grid_pinpoints=pinpoints,
    )
    processor = LlavaNextProcessor(
        image_processor=image_processor, tokenizer=tok, patch_size=patch_size,
        vision_feature_select_strategy="default", chat_template=LLAVA_CHAT_TEMPLATE,
        image_token="<image>", num_additional_image_tokens=1,
    )
    return model, processor


def tiny_llava_next_video(image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2, seed: int = 0):
    """LlavaNextVideoForConditionalGeneration: LLaVA-NeXT plus ``<video>`` (frames 2x2-pooled); (model, processor)."""
    from transformers import (
        LlavaNextImageProcessor, LlavaNextVideoConfig, LlavaNextVideoForConditionalGeneration, LlavaNextVideoProcessor,
        LlavaNextVideoVideoProcessor,
    )

    tok = tiny_tokenizer(("<image>", "<video>"))
    pinpoints = [[image_size, image_size], [image_size, 2 * image_size], [2 * image_size, image_size]]
    side = image_size // patch_size
    config = LlavaNextVideoConfig(
        vision_config=_clip_vision(hidden, layers, image_size, patch_size), text_config=_llama_text(tok, hidden, layers),
        image_token_index=tok.convert_tokens_to_ids("<image>"), video_token_index=tok.convert_tokens_to_ids("<video>"),
        image_grid_pinpoints=pinpoints, vision_feature_select_strategy="default", vision_feature_layer=-1,
        image_seq_length=side ** 2, spatial_pool_stride=2, video_seq_length=(side // 2) ** 2,
    )
    torch.manual_seed(seed)
    model = LlavaNextVideoForConditionalGeneration(config).eval()
    size = {"shortest_edge": image_size}, {"height": image_size, "width": image_size}
    processor = LlavaNextVideoProcessor(
        image_processor=LlavaNextImageProcessor(size=size[0], crop_size=size[1], image_grid_pinpoints=pinpoints),
        video_processor=LlavaNextVideoVideoProcessor(size=size[0], crop_size=size[1]),
        tokenizer=tok, patch_size=patch_size, vision_feature_select_strategy="default",
        chat_template=LLAVA_CHAT_TEMPLATE, num_additional_image_tokens=1,
    )
    return model, processor


def tiny_llava_onevision(image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2, seed: int = 0):
    """LlavaOnevisionForConditionalGeneration with a SigLIP tower and ChatML; (model, processor)."""
    from transformers import (
        LlavaOnevisionConfig, LlavaOnevisionForConditionalGeneration, LlavaOnevisionImageProcessor,
        LlavaOnevisionProcessor, LlavaOnevisionVideoProcessor,
    )

    tok = tiny_tokenizer(("<image>", "<video>", "<|im_start|>", "<|im_end|>"))
    pinpoints = [[image_size, image_size], [image_size, 2 * image_size], [2 * image_size, image_size]]
    config = LlavaOnevisionConfig(
        vision_config=_siglip_vision(hidden, layers, image_size, patch_size),
        text_config=_llama_text(tok, hidden, layers),
        image_token_index=tok.convert_tokens_to_ids("<image>"), video_token_index=tok.convert_tokens_to_ids("<video>"),
        image_grid_pinpoints=pinpoints, vision_feature_select_strategy="full", vision_feature_layer=-1,
    )
    torch.manual_seed(seed)
    model = LlavaOnevisionForConditionalGeneration(config).eval()
    image_processor = LlavaOnevisionImageProcessor(
        size={"height": image_size, "width": image_size}, image_grid_pinpoints=pinpoints,
    )
    processor = LlavaOnevisionProcessor(
        image_processor=image_processor, tokenizer=tok,
        video_processor=LlavaOnevisionVideoProcessor(size={"height": image_size, "width": image_size}),
        num_image_tokens=(image_size // patch_size) ** 2,
        vision_feature_select_strategy="full", chat_template=ONEVISION_CHAT_TEMPLATE, vision_aspect_ratio="anyres_max_9",
    )
    return model, processor


def tiny_idefics3(image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2, seed: int = 0):
    """Idefics3ForConditionalGeneration (SmolVLM's class): SigLIP tower, pixel shuffle, no image splitting."""
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3ImageProcessor, Idefics3Processor

    tok = tiny_tokenizer(("<image>", "<fake_token_around_image>", "<global-img>", "<end_of_utterance>", "<|im_start|>"))
    scale = 2
    config = Idefics3Config(
        vision_config={"hidden_size": hidden, "intermediate_size": hidden * 2, "num_hidden_layers": layers,
                       "num_attention_heads": 4, "image_size": image_size, "patch_size": patch_size},
        text_config=_llama_text(tok, hidden, layers).to_dict(),
        image_token_id=tok.convert_tokens_to_ids("<image>"), scale_factor=scale,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(seed)
    model = Idefics3ForConditionalGeneration(config).eval()
    image_processor = Idefics3ImageProcessor(
        do_image_splitting=False, size={"longest_edge": image_size}, max_image_size={"longest_edge": image_size},
    )
    processor = Idefics3Processor(
        image_processor=image_processor, tokenizer=tok, image_seq_len=(image_size // patch_size) ** 2 // scale ** 2,
        chat_template=IDEFICS3_CHAT_TEMPLATE,
    )
    return model, processor


def tiny_paligemma(image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2, seed: int = 0):
    """PaliGemmaForConditionalGeneration (SigLIP + Gemma; prefix-LM mask via ``token_type_ids``)."""
    from transformers import GemmaConfig, PaliGemmaConfig, PaliGemmaForConditionalGeneration, PaliGemmaProcessor
    from transformers import SiglipImageProcessor

    tok = tiny_tokenizer(("<image>",))
    text = GemmaConfig(
        vocab_size=len(tok) + 1024 + 128 + 8, hidden_size=hidden, intermediate_size=hidden * 2,
        num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=1, head_dim=hidden // 4,
        max_position_embeddings=4096, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    image_processor = SiglipImageProcessor(size={"height": image_size, "width": image_size})
    image_processor.image_seq_length = (image_size // patch_size) ** 2
    processor = PaliGemmaProcessor(image_processor=image_processor, tokenizer=tok)  # adds <loc>/<seg> tokens
    config = PaliGemmaConfig(
        vision_config=_siglip_vision(hidden, layers, image_size, patch_size), text_config=text,
        image_token_index=tok.convert_tokens_to_ids("<image>"), vocab_size=text.vocab_size,
        projection_dim=hidden, hidden_size=hidden,
    )
    config.text_config.vocab_size = max(config.text_config.vocab_size, len(tok))
    torch.manual_seed(seed)
    model = PaliGemmaForConditionalGeneration(config).eval()
    return model, processor


# ---------------------------------------------------------------------------- BLIP-2 / InstructBLIP
#: the text a tiny T5 tokenizer's sentencepiece model is trained on (SEED-style questions and answers)
_T5_CORPUS = (
    "Question: What colour is the sky in the picture? Answer: Blue sky with a few white clouds. "
    "How many people are on the bench? Two, three, four people, nobody is sitting there. "
    "Where is the cat? On the sofa, under the table near the window, in a box, outside. "
    "What is the weather like? Sunny, rainy, snowing heavily over the mountains, foggy. "
    "What is the man holding? A cup of coffee, a phone, an umbrella, nothing. "
    "Which object is closest to the camera? The kettle, the fridge, the kitchen table, a bowl of fruit. "
    "Describe the image. red green blue yellow black white first second left right yes no the a of and is "
    "The quick brown fox jumps over the lazy dog 0 1 2 3 4 5 6 7 8 9 . , ? ! : ; ( ) - ' \" / "
    + " ".join("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
)


def tiny_t5_tokenizer(vocab_size: int = 256):
    """A real T5 tokenizer (Unigram, ``</s>`` appended, pad 0 / eos 1 / unk 2) on a sentencepiece
    model trained on the fly from a small text, offline; no ``<extra_id_*>`` sentinels."""
    import io

    import sentencepiece as spm
    from transformers import T5Tokenizer

    lines = [s.strip() + "." for s in _T5_CORPUS.split(".") if s.strip()] * 4
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=buf, vocab_size=vocab_size, model_type="unigram",
        pad_id=0, eos_id=1, unk_id=2, bos_id=-1, character_coverage=1.0, hard_vocab_limit=False,
        minloglevel=2, num_threads=1,
    )
    sp = spm.SentencePieceProcessor(model_proto=buf.getvalue())
    vocab = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    return T5Tokenizer(vocab=vocab, extra_ids=0)


def _blip_parts(hidden, layers, image_size, patch_size, num_query_tokens):
    from transformers import Blip2QFormerConfig, Blip2VisionConfig, BlipImageProcessor

    vision = Blip2VisionConfig(
        hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers, num_attention_heads=4,
        image_size=image_size, patch_size=patch_size,
    )
    qformer = Blip2QFormerConfig(
        hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers, num_attention_heads=4,
        encoder_hidden_size=hidden, cross_attention_frequency=1, vocab_size=1000,
    )
    image_processor = BlipImageProcessor(size={"height": image_size, "width": image_size})
    return vision, qformer, image_processor


def _t5_text(tok, hidden, layers):
    from transformers import T5Config

    return T5Config(
        vocab_size=len(tok), d_model=hidden, d_kv=hidden // 4, d_ff=hidden * 2, num_layers=layers,
        num_decoder_layers=layers, num_heads=4, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id, feed_forward_proj="gated-gelu", tie_word_embeddings=False,
    )


def tiny_blip2(language: str = "t5", image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2,
               num_query_tokens: int = 4, seed: int = 0):
    """Blip2ForConditionalGeneration with a T5 (encoder-decoder) or OPT (decoder-only) language model."""
    from transformers import Blip2Config, Blip2ForConditionalGeneration, Blip2Processor, OPTConfig

    vision, qformer, image_processor = _blip_parts(hidden, layers, image_size, patch_size, num_query_tokens)
    if language == "t5":
        tok = tiny_t5_tokenizer()
        text = _t5_text(tok, hidden, layers)
    elif language == "opt":
        tok = tiny_tokenizer(())
        text = OPTConfig(
            vocab_size=len(tok) + 1, hidden_size=hidden, ffn_dim=hidden * 2, num_hidden_layers=layers,
            num_attention_heads=4, word_embed_proj_dim=hidden, max_position_embeddings=2048,
            bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
        )
    else:
        raise ValueError(f"language must be 't5' or 'opt', got {language!r}")
    processor = Blip2Processor(image_processor=image_processor, tokenizer=tok, num_query_tokens=num_query_tokens)
    image_token_id = tok.convert_tokens_to_ids("<image>")
    text.vocab_size = max(text.vocab_size, len(tok))
    config = Blip2Config(
        vision_config=vision, qformer_config=qformer, text_config=text, num_query_tokens=num_query_tokens,
        image_token_index=image_token_id,
    )
    torch.manual_seed(seed)
    model = Blip2ForConditionalGeneration(config).eval()
    return model, processor


def tiny_instructblip(image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2,
                      num_query_tokens: int = 4, seed: int = 0):
    """InstructBlipForConditionalGeneration with a T5 language model (the SEED v1 reference family);
    the Q-Former reads the prompt too, through its own (here: SmolLM2) tokenizer."""
    from transformers import (
        InstructBlipConfig, InstructBlipForConditionalGeneration, InstructBlipProcessor, InstructBlipQFormerConfig,
        InstructBlipVisionConfig, BlipImageProcessor,
    )

    tok = tiny_t5_tokenizer()
    qtok = tiny_tokenizer(())
    vision = InstructBlipVisionConfig(
        hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers, num_attention_heads=4,
        image_size=image_size, patch_size=patch_size,
    )
    qformer = InstructBlipQFormerConfig(
        hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers, num_attention_heads=4,
        encoder_hidden_size=hidden, cross_attention_frequency=1, vocab_size=len(qtok), pad_token_id=qtok.pad_token_id,
        max_position_embeddings=512,
    )
    image_processor = BlipImageProcessor(size={"height": image_size, "width": image_size})
    processor = InstructBlipProcessor(
        image_processor=image_processor, tokenizer=tok, qformer_tokenizer=qtok, num_query_tokens=num_query_tokens,
    )
    text = _t5_text(tok, hidden, layers)
    text.vocab_size = max(text.vocab_size, len(tok))
    config = InstructBlipConfig(
        vision_config=vision, qformer_config=qformer, text_config=text, num_query_tokens=num_query_tokens,
        image_token_index=tok.convert_tokens_to_ids("<image>"),
    )
    torch.manual_seed(seed)
    model = InstructBlipForConditionalGeneration(config).eval()
    return model, processor


# ---------------------------------------------------------------------------- Qwen3-VL, Gemma 3
def tiny_qwen3_vl(patch_size: int = 4, hidden: int = 64, layers: int = 2, seed: int = 0, moe: bool = False):
    """Qwen3VLForConditionalGeneration (or Qwen3-VL-MoE): M-RoPE (interleaved), deepstack features; (model, processor).

    Images at most 32x32 pixels as the tiny Qwen2-VL: (32 / 4 / 2) ** 2 = 16 image tokens each.
    """
    from transformers import Qwen2VLImageProcessor, Qwen3VLProcessor, Qwen3VLVideoProcessor

    if moe:
        from transformers import Qwen3VLMoeConfig as Config, Qwen3VLMoeForConditionalGeneration as Model
    else:
        from transformers import Qwen3VLConfig as Config, Qwen3VLForConditionalGeneration as Model

    tok = tiny_tokenizer(("<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>", "<|im_start|>", "<|im_end|>"))
    head_dim = hidden // 4
    vision = {"depth": layers, "hidden_size": hidden, "intermediate_size": hidden * 2, "num_heads": 4,
              "patch_size": patch_size, "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3,
              "out_hidden_size": hidden, "num_position_embeddings": 64, "deepstack_visual_indexes": [0]}
    text = {
        "vocab_size": len(tok), "hidden_size": hidden, "intermediate_size": hidden * 2, "num_hidden_layers": layers,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": head_dim, "max_position_embeddings": 4096,
        "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id, "pad_token_id": tok.pad_token_id,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_interleaved": True,
                            "mrope_section": [head_dim // 4, head_dim // 8, head_dim // 8]},
    }
    if moe:
        text.update({"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": hidden, "decoder_sparse_step": 1})
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
    video_processor = Qwen3VLVideoProcessor(
        patch_size=patch_size, merge_size=2, temporal_patch_size=2, size={"shortest_edge": px // 4, "longest_edge": px},
    )
    processor = Qwen3VLProcessor(image_processor=image_processor, tokenizer=tok, video_processor=video_processor,
                                 chat_template=QWEN2_VL_CHAT_TEMPLATE)
    return model, processor


#: Gemma 3's turns: "<start_of_turn>user\n...<end_of_turn>\n<start_of_turn>model\n"; an image is its <start_of_image>
GEMMA3_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<start_of_turn>{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}<start_of_image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


def tiny_gemma3(image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2, seed: int = 0,
                sliding_window: int = 16):
    """Gemma3ForConditionalGeneration: SigLIP tower, pooled to ``mm_tokens_per_image`` tokens, image tokens attending
    to each other both ways (``token_type_ids``), alternating sliding-window and global layers; (model, processor).

    ``sliding_window`` tokens (16) is shorter than a prompt with one image, so the sliding layers really cut."""
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3ImageProcessor, Gemma3Processor

    tok = tiny_tokenizer(("<start_of_image>", "<end_of_image>", "<image_soft_token>", "<start_of_turn>", "<end_of_turn>"))
    tok.boi_token, tok.eoi_token, tok.image_token = "<start_of_image>", "<end_of_image>", "<image_soft_token>"
    tok.boi_token_id, tok.eoi_token_id, tok.image_token_id = (tok.convert_tokens_to_ids(t) for t in (
        tok.boi_token, tok.eoi_token, tok.image_token))
    tokens = 4  # image tokens after pooling (mm_tokens_per_image), a square number
    text = {"vocab_size": len(tok), "hidden_size": hidden, "intermediate_size": hidden * 2, "num_hidden_layers": layers,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": hidden // 4, "max_position_embeddings": 4096,
            "sliding_window": sliding_window, "layer_types": ["sliding_attention", "full_attention"] * (layers // 2),
            "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id, "pad_token_id": tok.pad_token_id}
    vision = {"hidden_size": hidden, "intermediate_size": hidden * 2, "num_hidden_layers": layers,
              "num_attention_heads": 4, "image_size": image_size, "patch_size": patch_size}
    config = Gemma3Config(text_config=text, vision_config=vision, mm_tokens_per_image=tokens,
                          boi_token_index=tok.boi_token_id, eoi_token_index=tok.eoi_token_id,
                          image_token_index=tok.image_token_id)
    torch.manual_seed(seed)
    model = Gemma3ForConditionalGeneration(config).eval()
    image_processor = Gemma3ImageProcessor(size={"height": image_size, "width": image_size})
    processor = Gemma3Processor(image_processor=image_processor, tokenizer=tok, chat_template=GEMMA3_CHAT_TEMPLATE,
                                image_seq_length=tokens)
    return model, processor


#: Llama 3's header turns; an image is ``<|image|>`` before the text
MLLAMA_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}<|image|>{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}<|eot_id|>{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)


def tiny_mllama(image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2, seed: int = 0):
    """MllamaForConditionalGeneration (Llama 3.2 Vision): tiled images read by cross-attention layers, the text
    tokens' ``cross_attention_mask`` [batch, tokens, images, tiles] saying which images each token sees."""
    from transformers import MllamaConfig, MllamaForConditionalGeneration, MllamaImageProcessor, MllamaProcessor

    tok = tiny_tokenizer(("<|image|>", "<|python_tag|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"))
    vision = {"hidden_size": hidden, "num_hidden_layers": layers, "num_global_layers": 1, "attention_heads": 4,
              "intermediate_size": hidden * 2, "image_size": image_size, "patch_size": patch_size,
              "intermediate_layers_indices": [0, 1], "vision_output_dim": hidden * 3, "max_num_tiles": 4}
    text = {"vocab_size": len(tok), "hidden_size": hidden, "intermediate_size": hidden * 2,
            "num_hidden_layers": layers + 1, "num_attention_heads": 4, "num_key_value_heads": 2,
            "cross_attention_layers": [1], "max_position_embeddings": 4096,
            "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id, "pad_token_id": tok.pad_token_id}
    config = MllamaConfig(vision_config=vision, text_config=text, image_token_index=tok.convert_tokens_to_ids("<|image|>"))
    torch.manual_seed(seed)
    model = MllamaForConditionalGeneration(config).eval()
    image_processor = MllamaImageProcessor(size={"height": image_size, "width": image_size}, max_image_tiles=4)
    processor = MllamaProcessor(image_processor=image_processor, tokenizer=tok, chat_template=MLLAMA_CHAT_TEMPLATE)
    return model, processor


# ---------------------------------------------------------------------------- InternVL, SmolVLM2, Mistral3, GLM-4.1V
#: InternVL (-hf checkpoints): ChatML, an image is ``<IMG_CONTEXT>`` (the processor writes ``<img>...</img>``)
INTERNVL_CHAT_TEMPLATE = _CHATML.replace("IMAGE_PLACEHOLDER", "<IMG_CONTEXT>\n").replace("VIDEO_PLACEHOLDER", "<video>\n")


def _tiny_text(config_class, tok, hidden, layers, **kw):
    """A text decoder's config (``config_class``: ``Qwen2Config``, ``LlamaConfig``, ...) on ``tok``'s vocabulary."""
    return config_class(**{"vocab_size": len(tok), "hidden_size": hidden, "intermediate_size": hidden * 2,
            "num_hidden_layers": layers, "num_attention_heads": 4, "num_key_value_heads": 2,
            "max_position_embeddings": 4096, "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id,
            "pad_token_id": tok.pad_token_id, **kw})


def tiny_internvl(image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2, seed: int = 0):
    """InternVLForConditionalGeneration (InternViT + pixel shuffle + Qwen2), images cropped into at most 2 tiles
    plus a thumbnail (GotOcr2ImageProcessor), ``(32 / 8) ** 2 / 4 = 4`` tokens per tile; (model, processor)."""
    from transformers import GotOcr2ImageProcessor, InternVLConfig, InternVLForConditionalGeneration, InternVLProcessor
    from transformers import InternVLVideoProcessor, Qwen2Config

    tok = tiny_tokenizer(("<img>", "</img>", "<IMG_CONTEXT>", "<video>", "<|im_start|>", "<|im_end|>"))
    for attr, t in (("start_image_token", "<img>"), ("end_image_token", "</img>"),
                    ("context_image_token", "<IMG_CONTEXT>"), ("video_token", "<video>")):
        setattr(tok, attr, t)  # the hub tokenizers carry these as extra special tokens
        setattr(tok, attr + "_id", tok.convert_tokens_to_ids(t))
    seq = (image_size // patch_size) ** 2 // 4  # downsample_ratio 0.5 on each side
    vision = {"hidden_size": hidden, "intermediate_size": hidden * 2, "num_hidden_layers": layers,
              "num_attention_heads": 4, "image_size": image_size, "patch_size": patch_size}
    config = InternVLConfig(vision_config=vision, text_config=_tiny_text(Qwen2Config, tok, hidden, layers),
                            image_token_id=tok.context_image_token_id, image_seq_length=seq,
                            tie_word_embeddings=False)  # tied random embeddings repeat the last prompt token
    torch.manual_seed(seed)
    model = InternVLForConditionalGeneration(config).eval()
    size = {"height": image_size, "width": image_size}
    processor = InternVLProcessor(
        image_processor=GotOcr2ImageProcessor(size=size, crop_to_patches=True, max_patches=2),
        video_processor=InternVLVideoProcessor(size=size), tokenizer=tok, image_seq_length=seq,
        chat_template=INTERNVL_CHAT_TEMPLATE,
    )
    return model, processor


def tiny_smolvlm(image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2, seed: int = 0):
    """SmolVLMForConditionalGeneration (SmolVLM2): SigLIP tower, pixel shuffle, no image splitting, the Idefics3
    prompt format; its processor needs the ``num2words`` package (frame counts in words); (model, processor)."""
    from transformers import (
        LlamaConfig, SmolVLMConfig, SmolVLMForConditionalGeneration, SmolVLMImageProcessor, SmolVLMProcessor, SmolVLMVideoProcessor,
    )

    tok = tiny_tokenizer(("<image>", "<fake_token_around_image>", "<global-img>", "<end_of_utterance>", "<video>",
                          "<|im_start|>"))
    scale = 2
    config = SmolVLMConfig(
        vision_config={"hidden_size": hidden, "intermediate_size": hidden * 2, "num_hidden_layers": layers,
                       "num_attention_heads": 4, "image_size": image_size, "patch_size": patch_size},
        text_config=_tiny_text(LlamaConfig, tok, hidden, layers).to_dict(), image_token_id=tok.convert_tokens_to_ids("<image>"),
        scale_factor=scale, pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(seed)
    model = SmolVLMForConditionalGeneration(config).eval()
    size = {"longest_edge": image_size}
    processor = SmolVLMProcessor(
        image_processor=SmolVLMImageProcessor(do_image_splitting=False, size=size, max_image_size=size),
        video_processor=SmolVLMVideoProcessor(size=size, max_image_size=size), tokenizer=tok,
        image_seq_len=(image_size // patch_size) ** 2 // scale ** 2, chat_template=IDEFICS3_CHAT_TEMPLATE,
    )
    return model, processor


#: Mistral's instruction turns; an image is ``[IMG]`` (the processor writes its rows, ``[IMG_BREAK]``, ``[IMG_END]``)
MISTRAL_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}[INST]"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}[IMG]{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}[/INST]{% else %}{{ message['content'] if message['content'] is string else message['content'][0]['text'] }}"
    "{{ eos_token }}{% endif %}{% endfor %}"
)


def tiny_mistral3(image_size: int = 32, patch_size: int = 8, hidden: int = 64, layers: int = 2, seed: int = 0,
                  pixtral_llava: bool = False):
    """Mistral3ForConditionalGeneration (Mistral Small 3.1: Pixtral tower, 2x2 patch merger, Mistral decoder), or
    with ``pixtral_llava`` a LlavaForConditionalGeneration on a Pixtral tower (Pixtral-12B's -hf layout); images
    keep their aspect ratio (at most 32 pixels a side), a row of patches ends in ``[IMG_BREAK]``; (model, processor)."""
    from transformers import (
        LlavaConfig, LlavaForConditionalGeneration, Mistral3Config, Mistral3ForConditionalGeneration, MistralConfig,
        PixtralImageProcessor, PixtralProcessor, PixtralVisionConfig,
    )

    tok = tiny_tokenizer(("[IMG]", "[IMG_BREAK]", "[IMG_END]", "[INST]", "[/INST]"))
    merge = 1 if pixtral_llava else 2
    vision = PixtralVisionConfig(hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers,
                                 num_attention_heads=4, head_dim=hidden // 4, image_size=image_size,
                                 patch_size=patch_size)
    text = _tiny_text(MistralConfig, tok, hidden, layers, head_dim=hidden // 4, sliding_window=None)
    ids = {"image_token_index": tok.convert_tokens_to_ids("[IMG]"), "vision_feature_layer": -1,
           "tie_word_embeddings": False}
    if pixtral_llava:
        config = LlavaConfig(vision_config=vision, text_config=text, vision_feature_select_strategy="full",
                             multimodal_projector_bias=True, **ids)
        model_class = LlavaForConditionalGeneration
    else:
        config = Mistral3Config(vision_config=vision, text_config=text, spatial_merge_size=merge, **ids)
        model_class = Mistral3ForConditionalGeneration
    torch.manual_seed(seed)
    model = model_class(config).eval()
    processor = PixtralProcessor(
        image_processor=PixtralImageProcessor(size={"longest_edge": image_size},
                                              patch_size={"height": patch_size, "width": patch_size}),
        tokenizer=tok, patch_size=patch_size, spatial_merge_size=merge, chat_template=MISTRAL_CHAT_TEMPLATE,
    )
    return model, processor


#: GLM-4.1V's turns: "[gMASK]<sop><|user|>\n...<|assistant|>\n"; an image is <|begin_of_image|><|image|><|end_of_image|>
GLM4V_CHAT_TEMPLATE = (
    "[gMASK]<sop>{% for message in messages %}<|{{ message['role'] }}|>\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}<|begin_of_image|><|image|><|end_of_image|>"
    "{% elif c['type'] == 'video' %}<|begin_of_video|><|video|><|end_of_video|>{% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def tiny_glm4v(patch_size: int = 4, hidden: int = 64, layers: int = 2, seed: int = 0, moe: bool = False):
    """Glm4vForConditionalGeneration (GLM-4.1V; or Glm4vMoe, GLM-4.5V): M-RoPE over (temporal, height, width) as
    Qwen2-VL, images resized to at most 32x32 pixels: (32 / 4 / 2) ** 2 = 16 image tokens each; (model, processor)."""
    from transformers import Glm4vImageProcessor, Glm4vProcessor, Glm4vVideoProcessor

    if moe:
        from transformers import Glm4vMoeConfig as Config, Glm4vMoeForConditionalGeneration as Model
    else:
        from transformers import Glm4vConfig as Config, Glm4vForConditionalGeneration as Model

    marks = ("<|begin_of_image|>", "<|end_of_image|>", "<|image|>", "<|begin_of_video|>", "<|end_of_video|>",
             "<|video|>", "[gMASK]", "<sop>", "<|user|>", "<|assistant|>")
    tok = tiny_tokenizer(marks)
    head_dim = hidden // 4
    vision = {"depth": layers, "hidden_size": hidden, "intermediate_size": hidden * 2, "num_heads": 4,
              "patch_size": patch_size, "spatial_merge_size": 2, "temporal_patch_size": 2, "image_size": 32,
              "out_hidden_size": hidden}
    text = {"vocab_size": len(tok), "hidden_size": hidden, "intermediate_size": hidden * 2, "num_hidden_layers": layers,
            "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 4096,
            "pad_token_id": tok.pad_token_id, "eos_token_id": tok.eos_token_id,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5,
                                "mrope_section": [head_dim // 8, head_dim // 16, head_dim // 16]}}
    if moe:
        text.update({"n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": hidden,
                     "n_shared_experts": 1, "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1})
    ids = dict(zip(("image_start_token_id", "image_end_token_id", "image_token_id", "video_start_token_id",
                    "video_end_token_id", "video_token_id"), tok.convert_tokens_to_ids(list(marks[:6]))))
    config = Config(vision_config=vision, text_config=text, **ids)
    torch.manual_seed(seed)
    model = Model(config).eval()
    px = 32 * 32
    size = {"shortest_edge": px // 4, "longest_edge": px}
    processor = Glm4vProcessor(
        image_processor=Glm4vImageProcessor(patch_size=patch_size, merge_size=2, temporal_patch_size=2, size=size),
        video_processor=Glm4vVideoProcessor(patch_size=patch_size, merge_size=2, temporal_patch_size=2,
                                            size={"shortest_edge": px // 4, "longest_edge": 2 * px}),
        tokenizer=tok, chat_template=GLM4V_CHAT_TEMPLATE,
    )
    return model, processor


#: ``tiny-<family>`` specs: builder and its arguments
TINY_FAMILIES = {
    "tiny-llava-next": (tiny_llava_next, {}),
    "tiny-llava-onevision": (tiny_llava_onevision, {}),
    "tiny-llava-next-video": (tiny_llava_next_video, {}),
    "tiny-qwen2.5-vl": (tiny_qwen2_vl, {"v2_5": True}),
    "tiny-qwen3-vl": (tiny_qwen3_vl, {}),
    "tiny-qwen3-vl-moe": (tiny_qwen3_vl, {"moe": True}),
    "tiny-glm4v": (tiny_glm4v, {}),
    "tiny-glm4v-moe": (tiny_glm4v, {"moe": True}),
    "tiny-gemma3": (tiny_gemma3, {}),
    "tiny-mllama": (tiny_mllama, {}),
    "tiny-idefics3": (tiny_idefics3, {}),
    "tiny-internvl": (tiny_internvl, {}),
    "tiny-smolvlm": (tiny_smolvlm, {}),
    "tiny-mistral3": (tiny_mistral3, {}),
    "tiny-pixtral": (tiny_mistral3, {"pixtral_llava": True}),
    "tiny-paligemma": (tiny_paligemma, {}),
    "tiny-blip2-t5": (tiny_blip2, {"language": "t5"}),
    "tiny-blip2-opt": (tiny_blip2, {"language": "opt"}),
    "tiny-instructblip-t5": (tiny_instructblip, {}),
}


@register_model(*TINY_FAMILIES)
def load_tiny_family(target, *, prefix, **options):
    """``tiny-<family>``: a random-weight model built from a config (tests only)."""
    builder, kwargs = TINY_FAMILIES[prefix]
    return load_built(builder(**kwargs), prefix, **options)


DESCRIPTIONS.update({p: f"random-weight {p[5:]} model built from a config (tests only, not accuracy)"
                     for p in TINY_FAMILIES})
