"""Vision-language families through their real transformers classes, tiny random weights, CPU.

Each family is built from a config (``tests.tiny_models``) with a processor on a real
tokenizer (SmolLM2's; a T5 Unigram tokenizer trained on the fly for the T5 models), and used
through ``load_adapter("tiny-<family>")``: scoring (one image, two images, IMAGE markers between
text where the family interleaves), generation, the shared-prefix engine against the reference
scorer, and the clear errors for images a family cannot take.
"""
import math

import pytest
import torch
from PIL import Image

from mmbench_lib.models import load_adapter
from mmbench_lib.core.requests import IMAGE, GenerateRequest, ScoreRequest
from mmbench_lib.models.encdec import Blip2EncoderDecoder, OneAtATimeScorer
from mmbench_lib.models.families import PaliGemma, Qwen2VL
from mmbench_lib.scoring import ReferenceScorer

from ..scores import assert_same_scores, largest_tolerance, tolerance

#: spec -> (several images, IMAGE markers between text, shared-prefix engine)
DECODER_FAMILIES = {
    "tiny-llava-next": (True, True, True),
    "tiny-llava-onevision": (True, True, True),
    "tiny-llava-next-video": (True, True, True),
    "tiny-qwen2-vl": (True, True, True),  # M-RoPE: the engine shifts choice positions by rope_deltas
    "tiny-qwen2.5-vl": (True, True, True),
    "tiny-idefics3": (True, True, True),
    "tiny-paligemma": (True, False, True),  # images first, prefix-LM token types
    "tiny-blip2-opt": (False, False, False),  # one image, query tokens first; reference scorer forced
}
ENCDEC_FAMILIES = ["tiny-blip2-t5", "tiny-instructblip-t5"]

_CACHE = {}


def _sharpen(model, factor=8.0):
    """Scale the decoder LM's query/key projections so attention is peaky: with the default init it is
    almost uniform, and a wrong position or mask would hide below the tolerance."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "language_model" in name and any(k in name for k in ("q_proj", "k_proj")):
                p.mul_(factor)


def adapter(spec, scorer="reference"):
    if spec not in _CACHE:
        _CACHE[spec] = load_adapter(spec, device="cpu")
        _sharpen(_CACHE[spec].model)
    base = _CACHE[spec]
    if scorer == "reference":
        return base
    return type(base)(base.model, base.processor, spec, scorer=scorer, info=base.info)


def _images():
    return (Image.new("RGB", (40, 30), (220, 20, 20)), Image.new("RGB", (30, 44), (20, 20, 220)),
            Image.new("RGB", (48, 48), (20, 180, 40)))


def _requests(spec):
    multi, interleave, _ = DECODER_FAMILIES.get(spec, (False, False, False))
    red, blue, green = _images()
    reqs = [
        ScoreRequest("one", "Question: What colour is the square?\nAnswer:",
                     [" Red", " Red and green stripes", " Blue", " A dog"], [red]),
        ScoreRequest("chat", "Is it a photo?", [" Yes", " No, it is a drawing"], [green], chat=True),
    ]
    if multi:
        reqs.append(ScoreRequest("two", "Question: Which image is greener?\nAnswer:",
                                 [" The first", " The second one", " Both"], [red, green]))
    if interleave:
        reqs.append(ScoreRequest("inter", f"Compare {IMAGE} with {IMAGE}. Which is red?",
                                 [" The first", " The second"], [red, blue]))
    return reqs


def _assert_same(ref, eng, model):
    assert_same_scores(ref, eng, model)


@pytest.mark.parametrize("spec", list(DECODER_FAMILIES))
def test_decoder_family_scores_and_generates(spec):
    a = adapter(spec)
    multi, interleave, _ = DECODER_FAMILIES[spec]
    reqs = _requests(spec)
    results = a.score_choices(reqs)
    assert [len(r) for r in results] == [len(r.continuations) for r in reqs]
    for r in results:
        assert all(math.isfinite(s.sum_logprob) and s.sum_logprob < 0 and s.num_tokens >= 1 for s in r)
    # the images really enter the computation
    red, blue, green = _images()
    swapped = reqs[-1].images[::-1] if len(reqs[-1].images) > 1 else [blue]
    [other] = a.score_choices([ScoreRequest("x", reqs[-1].prompt, reqs[-1].continuations, swapped, reqs[-1].chat)])
    assert other[0].sum_logprob != pytest.approx(results[-1][0].sum_logprob, abs=1e-6)
    [g] = a.generate([GenerateRequest("g", "Describe the image.", [red], max_new_tokens=3)])
    assert isinstance(g.text, str) and 1 <= g.num_tokens <= 3
    d = a.describe()
    assert d["trust_remote_code"] is False and d["family"] and d["scorer"] == "reference"
    # families that cannot interleave say so (the manifest records describe())
    assert ("image_placement" in d) == (not interleave)


@pytest.mark.parametrize("spec", [s for s, (_, _, eng) in DECODER_FAMILIES.items() if eng])
def test_engine_matches_reference(spec):
    reqs = _requests(spec)
    ref = adapter(spec).score_choices(reqs)
    engine = adapter(spec, "shared-prefix")
    assert engine.describe()["scorer"] == "shared-prefix"
    _assert_same(ref, engine.score_choices(reqs), engine.model)  # several questions in one call (caches stacked)
    _assert_same(ref[:1], engine.score_choices(reqs[:1]), engine.model)  # and one alone


def test_blip2_opt_forces_the_reference_scorer():
    a = adapter("tiny-blip2-opt", "shared-prefix")
    assert isinstance(a.scorer, ReferenceScorer) and "pixel_values" in a.describe()["scorer_note"]


def test_qwen2_vl_engine_gives_choices_the_positions_after_the_vision_tokens(monkeypatch):
    a = adapter("tiny-qwen2-vl", "shared-prefix")
    assert isinstance(a, Qwen2VL) and a.describe()["scorer"] == "shared-prefix"
    reqs = _requests("tiny-qwen2-vl")
    p = a.prepare(reqs[2])  # image_grid_thw and the M-RoPE token types reach the model
    assert p.inputs["image_grid_thw"].shape == (2, 3) and "mm_token_type_ids" in p.inputs
    from mmbench_lib.scoring import engine

    with torch.inference_mode():
        a.model(**p.inputs)
    assert engine._rope_delta(a.model) < 0  # 2 images of 16 tokens: 3-D positions run behind the indices
    # with the delta ignored, the choices would sit at the wrong positions: far outside the derived tolerance
    ref = adapter("tiny-qwen2-vl").score_choices(reqs)
    monkeypatch.setattr(engine, "_rope_delta", lambda model: 0)
    wrong = a.score_choices(reqs)
    worst = max(abs(x.sum_logprob - y.sum_logprob) for r, w in zip(ref, wrong) for x, y in zip(r, w))
    assert worst > 20 * largest_tolerance(a.model, ref)  # 67x on the 0-based PaliGemma, 10^3x on Qwen


def test_paligemma_engine_batches_questions_with_one_based_positions(monkeypatch):
    from mmbench_lib.scoring import engine

    reqs = _requests("tiny-paligemma")
    ref = adapter("tiny-paligemma").score_choices(reqs)
    a = adapter("tiny-paligemma", "shared-prefix")
    calls = []
    real = a.model.forward
    monkeypatch.setattr(a.model, "forward", lambda *args, **kw: calls.append(kw) or real(*args, **kw))
    _assert_same(ref, a.score_choices(reqs), a.model)
    choice_passes = [kw for kw in calls if kw.get("past_key_values", kw.get("cache")) is not None]
    # the row pass (all choices of all questions, checked once against...) and the tree pass: one row per question
    assert len(choice_passes) == 2 and choice_passes[0]["input_ids"].shape[0] > len(reqs)
    assert choice_passes[1]["input_ids"].shape[0] == len(reqs) and choice_passes[1]["attention_mask"].dim() == 4
    monkeypatch.setattr(engine, "_position_base", lambda model: 0)  # 0-based: every choice one position off
    wrong = a.score_choices(reqs)
    worst = max(abs(x.sum_logprob - y.sum_logprob) for r, w in zip(ref, wrong) for x, y in zip(r, w))
    assert worst > 20 * largest_tolerance(a.model, ref)  # 67x on the 0-based PaliGemma, 10^3x on Qwen


def test_llava_next_passes_image_sizes():
    a = adapter("tiny-llava-next")
    p = a.prepare(_requests("tiny-llava-next")[2])
    assert p.inputs["image_sizes"].tolist() == [[30, 40], [48, 48]]


def test_paligemma_choices_are_causal_suffix_tokens():
    a = adapter("tiny-paligemma")
    assert isinstance(a, PaliGemma) and a.extend_rules()["token_type_ids"] == 1
    p = a.prepare(ScoreRequest("q", "What colour?", [" red", " red and blue"], [_images()[0]]))
    assert "labels" not in p.inputs and int(p.inputs["token_type_ids"].sum()) == 0  # prefix: all 0
    first = [a.continuation_ids(" red")[0]]
    # with 1 (suffix, causal) a choice's first token does not see the tokens after it ...
    scores = ReferenceScorer().score(a.model, p)
    [short] = ReferenceScorer().score(a.model, type(p)(p.inputs, [first], p.extend))
    assert scores[0].sum_logprob == pytest.approx(short.sum_logprob, abs=tolerance(a.model, short))
    # ... with 0 it would join the bidirectional prefix and the prefix would see the choice (a leak)
    leak = {**p.extend, "token_type_ids": 0}
    a_ = ReferenceScorer().score(a.model, type(p)(p.inputs, [p.continuations[1]], leak))[0]
    b_ = ReferenceScorer().score(a.model, type(p)(p.inputs, [first], leak))[0]
    assert a_.sum_logprob != pytest.approx(b_.sum_logprob, abs=1e-3)


def test_images_a_family_cannot_take_fail_with_a_clear_error():
    red, blue, _ = _images()
    with pytest.raises(ValueError, match="blip2 takes at most 1 image"):
        adapter("tiny-blip2-opt").score_choices([ScoreRequest("x", "Which?", [" a"], [red, blue])])
    with pytest.raises(ValueError, match="exactly 1 image per prompt, got 2"):
        adapter("tiny-blip2-t5").score_choices([ScoreRequest("x", "Which?", [" a"], [red, blue])])
    # a processor that rejects the images: a literal <image> in the question text adds a placeholder
    with pytest.raises(ValueError, match=r"idefics3 processor \(Idefics3Processor\) rejected a prompt with 1 image"):
        adapter("tiny-idefics3").score_choices([ScoreRequest("x", "Is <image> shown?", [" a"], [red])])


@pytest.mark.parametrize("spec", ENCDEC_FAMILIES)
def test_encoder_decoder_scores_choices_as_t5_targets(spec):
    a = adapter(spec)
    assert isinstance(a, Blip2EncoderDecoder)
    assert "markers in the prompt are removed" in a.describe()["image_placement"]
    red, blue, _ = _images()
    reqs = [
        ScoreRequest("one", "Question: What colour is the sky?\nAnswer:",
                     [" Blue", " Blue sky with a few white clouds", " Green", " A red brick wall"], [red]),
        ScoreRequest("mark", f"{IMAGE}Question: How many people?\nAnswer:", [" Two", " Three", " Four people"], [blue]),
    ]
    eos = a.tokenizer.eos_token_id
    prepared = [a.prepare(r) for r in reqs]
    assert all(t[-1] == eos for p in prepared for t in p.targets)  # T5 convention: </s> is scored
    assert eos not in a.tokenizer(" Blue", add_special_tokens=False)["input_ids"]  # added once, by the adapter
    batched = a.score_choices(reqs)
    loop = [OneAtATimeScorer().score(a.model, p) for p in prepared]
    _assert_same(loop, batched, a.model)
    assert [s.num_tokens for s in batched[0]] == [len(t) for t in prepared[0].targets]
    [other] = a.score_choices([ScoreRequest("one", reqs[0].prompt, reqs[0].continuations, [blue])])
    assert other[0].sum_logprob != pytest.approx(batched[0][0].sum_logprob, abs=1e-6)
    [g] = a.generate([GenerateRequest("g", "Question: What is it?\nAnswer:", [red], max_new_tokens=3)])
    assert isinstance(g.text, str) and g.num_tokens <= 3
    d = a.describe()
    assert d["trust_remote_code"] is False and d["append_eos"] is True and d["scorer"] == "encdec-batched"


def test_encoder_decoder_batches_the_decoder_pass():
    a = adapter("tiny-blip2-t5")
    calls = []
    lm = a.model.language_model
    handle = lm.register_forward_pre_hook(lambda m, args, kw: calls.append(kw), with_kwargs=True)
    try:
        a.score_choices([ScoreRequest("q", "Question: hi\nAnswer:", [" yes", " no", " maybe not"], [_images()[0]])])
    finally:
        handle.remove()
    assert len(calls) == 1 and calls[0]["decoder_input_ids"].shape[0] == 3
    assert calls[0]["encoder_outputs"][0].shape[0] == 3


def test_tiny_t5_tokenizer_is_a_real_t5_tokenizer():
    from transformers import T5Tokenizer

    from tests.tiny_models import tiny_t5_tokenizer

    tok = tiny_t5_tokenizer()
    assert isinstance(tok, T5Tokenizer) and (tok.pad_token_id, tok.eos_token_id, tok.unk_token_id) == (0, 1, 2)
    ids = tok("Blue sky").input_ids
    assert ids[-1] == tok.eos_token_id and tok.decode(ids, skip_special_tokens=True) == "Blue sky"
    assert tok.unk_token_id not in tok("Green grass").input_ids


def test_trust_remote_code_reaches_every_hub_loading_path(monkeypatch):
    import transformers

    seen = []

    def fake(*args, **kw):
        seen.append(kw.get("trust_remote_code"))
        raise RuntimeError("stop")

    def config(*args, **kw):  # the config is read first (a refused family stops before the weights)
        seen.append(("config", kw.get("trust_remote_code")))
        return transformers.AutoConfig.for_model("llava")

    for name in ("AutoModelForImageTextToText", "Blip2ForConditionalGeneration", "InstructBlipForConditionalGeneration"):
        monkeypatch.setattr(getattr(transformers, name), "from_pretrained", fake)
    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", config)
    for spec in ("vlm:x", "blip2:x", "instructblip:x"):
        for trc in (False, True):
            with pytest.raises(RuntimeError, match="stop"):
                load_adapter(spec, device="cpu", trust_remote_code=trc)
    assert seen == [("config", False), False, ("config", True), True] * 3


def test_unknown_tiny_family():
    with pytest.raises(ValueError, match="tiny-qwen2-vl"):
        load_adapter("tiny-gpt5")
