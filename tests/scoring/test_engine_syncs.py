"""The engine reads results back from the device a fixed number of times per group, not once per question.

On a GPU every ``.item()``, ``.tolist()``, ``.cpu()`` or truth test of a device tensor makes the host wait for
the device. The engine module's own calls are counted (the model's forwards and the CPU-side arithmetic of
``choice_scores`` are not the engine's): the count of one group must not grow with its number of questions.
"""
import sys
from contextlib import contextmanager

import pytest
import torch
from PIL import Image

from mmbench_lib.core.requests import ScoreRequest
from mmbench_lib.models.hf import HFCausalLM
from mmbench_lib.scoring import engine as engine_module
from mmbench_lib.scoring.engine import SharedPrefixScorer

SYNCS = ("item", "tolist", "cpu", "__bool__", "__int__", "__float__", "__index__")


@contextmanager
def count_engine_syncs():
    """Counts the device read-backs called from ``mmbench_lib/scoring/engine.py`` itself."""
    counts = {name: 0 for name in SYNCS}
    originals = {name: getattr(torch.Tensor, name) for name in SYNCS}

    def wrap(name, fn):
        def counted(self, *a, **kw):
            if sys._getframe(1).f_code.co_filename == engine_module.__file__:
                counts[name] += 1
            return fn(self, *a, **kw)
        return counted

    for name, fn in originals.items():
        setattr(torch.Tensor, name, wrap(name, fn))
    try:
        yield counts
    finally:
        for name, fn in originals.items():
            setattr(torch.Tensor, name, fn)


def _questions(n, images=()):
    stems = ["What colour is the car?", "How many dogs are there in the park today?", "Where is the lamp?",
             "Which statement is true about the small boat near the shore?"]
    return [ScoreRequest(f"q{i}", f"Question: {stems[i % 4]} ({i})\nAnswer:",
                         [" Red", " Blue with white stripes", " Green", " It is black"],
                         images=[images[i % len(images)]] if images else []) for i in range(n)]


def _syncs(adapter, scorer, n, images=()):
    prepared = [adapter.prepare(r) for r in _questions(n, images)]
    with count_engine_syncs() as counts:
        scorer.score_many(adapter.model, prepared)
    return sum(counts.values())


def _warm(adapter, scorer, images=()):
    scorer.score_many(adapter.model, [adapter.prepare(r) for r in _questions(2, images)])  # one-time self-checks


@pytest.fixture(scope="module")
def tiny_text():
    from transformers import LlamaConfig, LlamaForCausalLM

    from mmbench_lib.models.embedded import load_tokenizer

    tok = load_tokenizer()
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.eos_token_id)
    torch.manual_seed(0)
    return HFCausalLM(LlamaForCausalLM(cfg).eval(), tok, "tiny-llama")


def test_packed_text_questions_read_back_once_per_group_not_per_question(tiny_text):
    scorer = SharedPrefixScorer(max_questions=64, pack_tokens=4096)
    _warm(tiny_text, scorer)
    few, many = _syncs(tiny_text, scorer, 2), _syncs(tiny_text, scorer, 12)
    assert few == many <= 3, (few, many)  # masks, prefixes, log-probs


def test_cached_text_questions_read_back_once_per_group_not_per_question(tiny_text):
    scorer = SharedPrefixScorer(packing=False, max_questions=64)
    _warm(tiny_text, scorer)
    few, many = _syncs(tiny_text, scorer, 2), _syncs(tiny_text, scorer, 12)
    assert few == many <= 3, (few, many)


def test_image_questions_read_back_once_per_group_not_per_question(tiny_llava):
    from mmbench_lib.models.hf import ImageTextToText

    adapter = ImageTextToText(tiny_llava.model, tiny_llava.processor, "tiny-llava", scorer="shared-prefix")
    scorer = SharedPrefixScorer(max_questions=64)
    images = [Image.new("RGB", (40, 30), (200, 30, 30)), Image.new("RGB", (64, 48), (20, 160, 40))]
    _warm(adapter, scorer, images)
    few, many = _syncs(adapter, scorer, 2, images), _syncs(adapter, scorer, 8, images)
    assert few == many <= 3, (few, many)


def test_mrope_questions_keep_their_position_deltas_on_the_device():
    """Qwen2-VL: each image prefix's M-RoPE delta is added on the device, not read back per question."""
    from mmbench_lib.models.hf import ImageTextToText
    from mmbench_lib.models.tiny import tiny_qwen2_vl
    from mmbench_lib.scoring.reference import ReferenceScorer

    from ..scores import assert_same_scores

    model, processor = tiny_qwen2_vl()
    adapter = ImageTextToText(model, processor, "tiny-qwen2-vl", scorer="shared-prefix")
    scorer = SharedPrefixScorer(max_questions=64)
    images = [Image.new("RGB", (40, 30), (200, 30, 30)), Image.new("RGB", (64, 48), (20, 160, 40))]
    _warm(adapter, scorer, images)
    few, many = _syncs(adapter, scorer, 2, images), _syncs(adapter, scorer, 6, images)
    assert few == many <= 3, (few, many)
    prepared = [adapter.prepare(r) for r in _questions(6, images)]
    assert_same_scores([ReferenceScorer().score(model, p) for p in prepared], scorer.score_many(model, prepared), model)
