"""The shared-prefix engine gives ReferenceScorer's numbers: text (real SmolLM2) and LLaVA with images.

The real SmolLM2 runs only the SEED-style exactness test (the CPU is slow); batching order, the
out-of-memory fallback and edge cases run on a tiny random-weight Llama with large weights, so
that a wrong position or mask shows up far above the tolerance.
"""

import pytest
import torch
from PIL import Image

from mmbench_lib.scoring.engine import SharedPrefixScorer, is_oom
from mmbench_lib.core.requests import IMAGE, ScoreRequest
from mmbench_lib.models.hf import HFCausalLM, ImageTextToText
from mmbench_lib.scoring import Prepared, ReferenceScorer, get_scorer

from ..scores import assert_same_scores


#: SEED-style four-choice questions; choices of 1 to 7 tokens, " Blue" a prefix of " Blue sky ..."
SEED_TEXT = [
    ("What colour is the sky in the picture?",
     [" Blue", " Blue sky with a few white clouds", " Green", " A red brick wall"]),
    ("How many people are on the bench?", [" Two", " Three", " Four people", " Nobody is sitting there"]),
    ("Where is the cat?", [" On the sofa", " Under the table near the window", " In a box", " Outside"]),
    ("What is the weather like?", [" Sunny", " Rainy", " Snowing heavily over the mountains", " Foggy"]),
    ("What is the man holding?", [" A cup of coffee", " A phone", " An umbrella", " Nothing"]),
    ("Which object is closest to the camera?",
     [" The kettle", " The fridge", " The kitchen table", " A bowl of fruit"]),
]


def _prompt(q):
    return f"{IMAGE}Question: {q}\nAnswer:"


def _assert_same(ref, eng, model):
    assert_same_scores(ref, eng, model)


@pytest.fixture(scope="module")
def tiny_text():
    """A 2-layer random Llama on the real SmolLM2 tokenizer, weights large enough to be peaky."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from mmbench_lib.models.tiny import tiny_tokenizer

    tok = tiny_tokenizer()
    cfg = LlamaConfig(
        vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=1024, initializer_range=0.3,
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(0)
    return HFCausalLM(LlamaForCausalLM(cfg).eval(), tok, "tiny-llama")


@pytest.fixture(scope="module")
def smol_engine(smollm2):
    return HFCausalLM(smollm2.model, smollm2.tokenizer, "smollm2", scorer="shared-prefix")


@pytest.fixture(scope="module")
def llava_engine(tiny_llava):
    return ImageTextToText(tiny_llava.model, tiny_llava.processor, "tiny-llava", scorer="shared-prefix")


def _images():
    return Image.new("RGB", (40, 30), (200, 30, 30)), Image.new("RGB", (64, 48), (20, 160, 40))


def test_registered_lazily():
    scorer = get_scorer("shared-prefix")
    assert isinstance(scorer, SharedPrefixScorer) and scorer.name == "shared-prefix"


def test_text_questions_match_reference_on_smollm2(smollm2, smol_engine):
    reqs = [ScoreRequest(f"q{i}", _prompt(q), c) for i, (q, c) in enumerate(SEED_TEXT[:4])]
    ref = smollm2.score_choices(reqs)
    eng = smol_engine.score_choices(reqs)  # packed: four questions in one sequence, tree mask
    _assert_same(ref, eng, smollm2.model)
    cached = SharedPrefixScorer(packing=False).score_many(smollm2.model, [smollm2.prepare(r) for r in reqs])
    _assert_same(ref, cached, smollm2.model)  # and the cached path: prefixes of different lengths, 16 choice rows
    assert smol_engine.describe()["scorer"] == "shared-prefix"
    lengths = {s.num_tokens for q in eng for s in q}
    assert min(lengths) == 1 and max(lengths) >= 6  # one-token and long choices both exercised
    assert eng[0][0].sum_logprob > eng[0][3].sum_logprob  # a real model: "Blue" beats the brick wall


def test_text_questions_match_reference_on_tiny_llama(tiny_text):
    engine = HFCausalLM(tiny_text.model, tiny_text.tokenizer, "tiny-llama", scorer="shared-prefix")
    reqs = [ScoreRequest(f"q{i}", _prompt(q), c, chat=i % 2 == 1) for i, (q, c) in enumerate(SEED_TEXT)]
    ref = tiny_text.score_choices(reqs)
    _assert_same(ref, engine.score_choices(reqs), tiny_text.model)
    _assert_same(ref[:2], [engine.scorer.score(tiny_text.model, tiny_text.prepare(r)) for r in reqs[:2]], tiny_text.model)


def test_empty_and_one_token_continuations(tiny_text):
    p = tiny_text.prepare(ScoreRequest("q", "Question: hi\nAnswer:", [" yes"]))
    prepared = Prepared(p.inputs, [[], p.continuations[0], p.continuations[0] + [13]], p.extend)
    ref = ReferenceScorer().score(tiny_text.model, prepared)
    eng = SharedPrefixScorer().score(tiny_text.model, prepared)
    _assert_same([ref], [eng], tiny_text.model)
    assert eng[0].num_tokens == 0 and eng[1].num_tokens == 1 and eng[2].num_tokens == 2


def test_one_image_and_two_images_match_reference_on_tiny_llava(tiny_llava, llava_engine):
    red, green = _images()
    reqs = [
        ScoreRequest("one", "Question: What colour is the square?\nAnswer:",
                     [" Red", " Red and green stripes", " Blue", " A dog"], [red]),
        ScoreRequest("two", f"{IMAGE}{IMAGE}Question: Which image is greener?\nAnswer:",
                     [" The first", " The second one", " Both", " Neither of the two images"], [red, green]),
        ScoreRequest("chat", "Is it a photo?", [" Yes", " No, it is a drawing"], [green], chat=True),
        ScoreRequest("mid", f"Compare {IMAGE} with {IMAGE}. Same?", [" Yes", " No"], [green, red]),
    ]
    ref = tiny_llava.score_choices(reqs)
    eng = llava_engine.score_choices(reqs)  # one group: caches of different lengths stacked
    _assert_same(ref, eng, tiny_llava.model)
    for r in reqs:  # and one question at a time
        _assert_same(tiny_llava.score_choices([r]), llava_engine.score_choices([r]), tiny_llava.model)


def test_pixel_values_only_go_through_the_prefix_pass(tiny_llava):
    red, green = _images()
    calls = []
    model = _Spy(tiny_llava.model, calls)
    request = ScoreRequest("q", "Question: what?\nAnswer:", [" Red square", " Blue circle shape"], [red, green])
    p = tiny_llava.prepare(request)
    SharedPrefixScorer(tree=False).score(model, p)
    assert [("pixel_values" in kw and kw["pixel_values"] is not None) for kw in calls] == [True, False]
    assert [kw["input_ids"].shape[0] for kw in calls] == [1, 2]  # prefix once, both choices in one batch
    # the tree pass (checked once against that row pass): both choices in ONE row over the uncopied cache
    scorer = SharedPrefixScorer()
    ref = ReferenceScorer().score(tiny_llava.model, p)
    _assert_same([ref], [scorer.score(model, p)], tiny_llava.model)  # first call: row pass and tree pass compared
    assert list(scorer._tree_checked.values()) == [True]
    calls.clear()
    _assert_same([ref], [scorer.score(model, p)], tiny_llava.model)
    assert [("pixel_values" in kw and kw["pixel_values"] is not None) for kw in calls] == [True, False]
    n_body = sum(len(c) - 1 for c in p.continuations)  # each choice without its last token, end to end
    assert [tuple(kw["input_ids"].shape) for kw in calls[1:]] == [(1, n_body)] and _tree_calls(calls[1:])


def test_tree_pass_batches_questions_and_matches_the_reference(tiny_llava):
    red, green = _images()
    reqs = [
        ScoreRequest("one", "Question: What colour is the square?\nAnswer:",
                     [" Red", " Red and green stripes", " Blue", " A dog on a very long lead"], [red]),
        ScoreRequest("two", f"{IMAGE}{IMAGE}Question: Which image is greener?\nAnswer:",
                     [" The first", " The second one", " Both"], [red, green]),
        ScoreRequest("chat", "Is it a photo?", [" Yes", " No, it is a drawing"], [green], chat=True),
    ]
    prepared = [tiny_llava.prepare(r) for r in reqs]
    ref = [ReferenceScorer().score(tiny_llava.model, p) for p in prepared]
    scorer = SharedPrefixScorer()
    calls = []
    model = _Spy(tiny_llava.model, calls)
    _assert_same(ref, scorer.score_many(model, prepared), tiny_llava.model)  # the first group also checks against the row pass
    calls.clear()
    _assert_same(ref, scorer.score_many(model, prepared), tiny_llava.model)
    cached = [kw for kw in calls if kw.get("past_key_values", kw.get("cache")) is not None]
    assert cached == _tree_calls(calls) and len(cached) == 1
    assert cached[0]["input_ids"].shape[0] == 3  # one row per question, not one per choice (9 multi-token choices)


def test_a_model_that_ignores_the_tree_mask_keeps_the_row_pass(tiny_llava):
    red, _ = _images()
    p = tiny_llava.prepare(ScoreRequest("q", "Question: what?\nAnswer:", [" Red square", " Blue circle shape"], [red]))
    ref = ReferenceScorer().score(tiny_llava.model, p)
    scorer = SharedPrefixScorer()
    model = _PlainCausal(tiny_llava.model, [])
    with pytest.warns(UserWarning, match="one row each"):
        _assert_same([ref], [scorer.score(model, p)], tiny_llava.model)
    assert list(scorer._tree_checked.values()) == [False]
    n = len(model.calls)
    _assert_same([ref], [scorer.score(model, p)], tiny_llava.model)
    assert not _tree_calls(model.calls[n:])  # the tree pass is not tried again


def test_score_many_returns_results_in_input_order(tiny_text):
    # lengths deliberately shuffled: sorting longest-first must not leak into the output order
    qs = [SEED_TEXT[i % len(SEED_TEXT)] for i in (3, 0, 5, 1, 4, 2, 0, 3)]
    prepared = [tiny_text.prepare(ScoreRequest(f"q{i}", "Context. " * (i * 3 % 7) + _prompt(q), c))
                for i, (q, c) in enumerate(qs)]
    ref = [ReferenceScorer().score(tiny_text.model, p) for p in prepared]
    calls = []
    eng = SharedPrefixScorer(token_budget=1200, packing=False).score_many(_Spy(tiny_text.model, calls), prepared)
    _assert_same(ref, eng, tiny_text.model)
    assert len(calls) < 2 * len(prepared)  # questions were batched together
    assert max(kw["input_ids"].shape[0] for kw in calls) > 4  # choice rows of several questions in one pass


@pytest.mark.parametrize("error", ["cuda", "runtime"])
def test_out_of_memory_halves_and_completes(tiny_text, error):
    qs = SEED_TEXT[:5]
    prepared = [tiny_text.prepare(ScoreRequest(f"q{i}", "Note. " * i + _prompt(q), c)) for i, (q, c) in enumerate(qs)]
    ref = [ReferenceScorer().score(tiny_text.model, p) for p in prepared]
    scorer = SharedPrefixScorer(token_budget=100_000, packing=False)
    model = _OOMAbove(tiny_text.model, 2, error)
    eng = scorer.score_many(model, prepared)
    _assert_same(ref, eng, tiny_text.model)
    assert scorer.oom_events >= 2 and scorer.max_questions == 1 and scorer.max_rows == 2
    assert all(b <= 2 for b in model.ok_batches)


def test_other_errors_are_not_swallowed(tiny_text):
    p = tiny_text.prepare(ScoreRequest("q", "Question: hi\nAnswer:", [" yes", " no"]))

    class Broken(_Spy):
        def __call__(self, **kw):
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        SharedPrefixScorer().score(Broken(tiny_text.model, []), p)
    assert is_oom(torch.cuda.OutOfMemoryError("x")) and is_oom(RuntimeError("CUDA out of memory."))
    assert not is_oom(RuntimeError("shape mismatch"))


# ---------------------------------------------------------------- packed text questions
def _packed_calls(calls):
    """Packed forwards: a 4-D mask and no cache (the tree choice pass has a 4-D mask over a cache)."""
    return [kw for kw in calls
            if getattr(kw.get("attention_mask"), "dim", lambda: 2)() == 4 and kw.get("past_key_values", kw.get("cache")) is None]


def _tree_calls(calls):
    return [kw for kw in calls
            if getattr(kw.get("attention_mask"), "dim", lambda: 2)() == 4 and kw.get("past_key_values", kw.get("cache")) is not None]


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_packed_rows_match_reference_and_read_each_token_once(tiny_text, attn):
    """Several questions in one sequence: exact, every token real, logits only where scored."""
    tiny_text.model.config._attn_implementation = attn
    try:
        prepared = [tiny_text.prepare(ScoreRequest(f"q{i}", "Context. " * (i % 3) + _prompt(q), c, chat=i == 1))
                    for i, (q, c) in enumerate(SEED_TEXT)]
        ref = [ReferenceScorer().score(tiny_text.model, p) for p in prepared]
        calls = []
        scorer = SharedPrefixScorer(pack_tokens=120)
        eng = scorer.score_many(_Spy(tiny_text.model, calls), prepared)
        _assert_same(ref, eng, tiny_text.model)
        packed = _packed_calls(calls)
        assert 1 < len(packed) < len(prepared)  # several questions per row, more than one row
        real = sum(p.inputs["input_ids"].shape[1] + sum(len(c) - 1 for c in p.continuations) for p in prepared)
        assert sum(kw["input_ids"].shape[1] for kw in packed) == real  # no padding anywhere
        assert all(kw["input_ids"].shape[0] == 1 and kw["use_cache"] is False for kw in packed)
        scored = sum(1 + len(c) - 1 for p in prepared for c in p.continuations)  # distinct predicting positions
        assert sum(len(kw["logits_to_keep"]) for kw in packed) <= scored
        assert list(scorer._pack_checked.values()) == [True]  # checked once against the cached path
    finally:
        tiny_text.model.config._attn_implementation = "sdpa"


def test_packed_results_come_back_in_input_order(tiny_text):
    qs = [SEED_TEXT[i % len(SEED_TEXT)] for i in (3, 0, 5, 1, 4, 2, 0, 3)]
    prepared = [tiny_text.prepare(ScoreRequest(f"q{i}", "Context. " * (i * 3 % 7) + _prompt(q), c))
                for i, (q, c) in enumerate(qs)]
    ref = [ReferenceScorer().score(tiny_text.model, p) for p in prepared]
    _assert_same(ref, SharedPrefixScorer(pack_tokens=90).score_many(tiny_text.model, prepared), tiny_text.model)


def test_packed_empty_and_one_token_continuations(tiny_text):
    p = tiny_text.prepare(ScoreRequest("q", "Question: hi\nAnswer:", [" yes"]))
    prepared = Prepared(p.inputs, [[], p.continuations[0], p.continuations[0] + [13]], p.extend)
    ref = ReferenceScorer().score(tiny_text.model, prepared)
    _assert_same([ref], SharedPrefixScorer().score_many(tiny_text.model, [prepared, prepared])[:1], tiny_text.model)


def test_packed_rows_split_on_out_of_memory(tiny_text):
    prepared = [tiny_text.prepare(ScoreRequest(f"q{i}", "Note. " * i + _prompt(q), c))
                for i, (q, c) in enumerate(SEED_TEXT)]
    ref = [ReferenceScorer().score(tiny_text.model, p) for p in prepared]
    model = _OOMLonger(tiny_text.model, 40)
    scorer = SharedPrefixScorer(pack_tokens=1000)
    _assert_same(ref, scorer.score_many(model, prepared), tiny_text.model)
    assert scorer.oom_events >= 2 and scorer.pack_tokens < 1000
    assert max(model.ok_lengths) <= 40


def test_a_model_that_ignores_the_tree_mask_is_caught_and_scored_the_cached_way(tiny_text):
    prepared = [tiny_text.prepare(ScoreRequest(f"q{i}", _prompt(q), c)) for i, (q, c) in enumerate(SEED_TEXT[:3])]
    ref = [ReferenceScorer().score(tiny_text.model, p) for p in prepared]
    scorer = SharedPrefixScorer()
    model = _PlainCausal(tiny_text.model, [])
    with pytest.warns(UserWarning, match="scored without packing"):
        eng = scorer.score_many(model, prepared)
    _assert_same(ref, eng, tiny_text.model)
    assert scorer._pack_checked[id(model)] is False
    calls_before = len(model.calls)
    _assert_same(ref, scorer.score_many(model, prepared), tiny_text.model)
    assert not _packed_calls(model.calls[calls_before:])  # not tried again


def test_family_inputs_are_not_packed(tiny_llava):
    red, _ = _images()
    calls = []
    p = tiny_llava.prepare(ScoreRequest("q", "Question: what?\nAnswer:", [" Red square", " Blue"], [red]))
    SharedPrefixScorer().score_many(_Spy(tiny_llava.model, calls), [p, p])
    assert calls and not _packed_calls(calls)


class _Spy:
    """Forwards calls to a model and records their keyword arguments."""

    def __init__(self, model, calls):
        self.model, self.calls = model, calls

    def __call__(self, **kw):
        self.calls.append(kw)
        return self.model(**kw)

    def __getattr__(self, name):
        return getattr(self.model, name)


class _OOMAbove(_Spy):
    """Raises an out-of-memory error for any forward with a batch larger than ``k``."""

    def __init__(self, model, k, kind):
        super().__init__(model, [])
        self.k, self.kind, self.ok_batches = k, kind, []

    def __call__(self, **kw):
        b = kw["input_ids"].shape[0]
        if b > self.k:
            if self.kind == "cuda":
                raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
            raise RuntimeError("CUDA error: out of memory")
        self.ok_batches.append(b)
        return self.model(**kw)


class _OOMLonger(_Spy):
    """Raises an out-of-memory error for any forward longer than ``k`` tokens."""

    def __init__(self, model, k):
        super().__init__(model, [])
        self.k, self.ok_lengths = k, []

    def __call__(self, **kw):
        n = kw["input_ids"].shape[1]
        if n > self.k and kw["attention_mask"].dim() == 4:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory.")
        self.ok_lengths.append(n)
        return self.model(**kw)


class _PlainCausal(_Spy):
    """A model whose attention ignores a custom 4-D mask (plain causal attention instead)."""

    def __call__(self, **kw):
        self.calls.append(kw)
        if kw.get("attention_mask") is not None and kw["attention_mask"].dim() == 4:
            kw = {**kw, "attention_mask": None}
        return self.model(**kw)
