"""Adapters through real transformers classes on the CPU: SmolLM2 (real weights) and a tiny LLaVA."""
import pytest
import torch
from PIL import Image

from mmbench_lib.models import load_adapter
from mmbench_lib.core.requests import IMAGE, GenerateRequest, ScoreRequest


def test_smollm2_generates_with_its_chat_template(smollm2):
    [g] = smollm2.generate([GenerateRequest("q", "What is the capital of France? Answer in one word.", max_new_tokens=12)])
    assert "paris" in g.text.lower()
    assert g.num_tokens <= 12


def test_generation_that_hits_the_token_limit_is_flagged(smollm2):
    [g] = smollm2.generate([GenerateRequest("q", "Count from one to one hundred in words.", max_new_tokens=5)])
    assert g.hit_limit and g.num_tokens == 5


def test_tiny_llava_scores_single_multi_and_interleaved_images(tiny_llava):
    red, blue = Image.new("RGB", (40, 30), (220, 20, 20)), Image.new("RGB", (30, 40), (20, 20, 220))
    reqs = [
        ScoreRequest("one", "Question: What colour is it?\nAnswer:", [" red", " blue"], [red], chat=True),
        ScoreRequest("two", "Question: Which differs?\nAnswer:", [" left", " right"], [red, blue], chat=True),
        ScoreRequest("inter", f"First {IMAGE} then {IMAGE}: which is red?", [" first", " second"], [red, blue]),
    ]
    results = tiny_llava.score_choices(reqs)
    assert [len(r) for r in results] == [2, 2, 2]
    for r in results:
        assert all(s.sum_logprob < 0 and s.num_tokens >= 1 for s in r)
    # the image really enters the computation: swapping the images changes the scores
    [swapped] = tiny_llava.score_choices([ScoreRequest("inter", reqs[2].prompt, reqs[2].continuations, [blue, red])])
    assert swapped[0].sum_logprob != pytest.approx(results[2][0].sum_logprob, abs=1e-6)


def test_tiny_llava_prefix_holds_one_image_block_per_image(tiny_llava):
    img = Image.new("RGB", (32, 32))
    prepared = tiny_llava.prepare(ScoreRequest("x", f"{IMAGE} and {IMAGE}?", [" a"], [img, img]))
    image_id = tiny_llava.model.config.image_token_id
    n_tokens = int((prepared.inputs["input_ids"] == image_id).sum())
    assert n_tokens == 2 * tiny_llava.model.config.image_seq_length
    assert prepared.inputs["pixel_values"].shape[0] == 2


def test_marker_count_must_match_images(tiny_llava):
    with pytest.raises(ValueError, match="2 image markers but 1 images"):
        tiny_llava.prepare(ScoreRequest("x", f"{IMAGE}{IMAGE}?", [" a"], [Image.new("RGB", (8, 8))]))


def test_tiny_llava_generates_through_the_real_generate(tiny_llava):
    [g] = tiny_llava.generate([GenerateRequest("q", "Describe the image.", [Image.new("RGB", (32, 32))], max_new_tokens=4)])
    assert isinstance(g.text, str) and g.num_tokens <= 4


def test_random_baseline_is_deterministic_per_item():
    a, b = load_adapter("random:3"), load_adapter("random:3")
    req = [ScoreRequest("item-1", "q", ["a", "b", "c", "d"])]
    assert a.score_choices(req) == b.score_choices(req)
    assert a.score_choices(req) != load_adapter("random:4").score_choices(req)


def test_unknown_model_spec():
    with pytest.raises(ValueError, match="unknown model spec"):
        load_adapter("gpt-17")


def test_dtype_is_fp32_on_cpu(smollm2):
    assert next(smollm2.model.parameters()).dtype == torch.float32
    assert smollm2.describe()["model_id"].startswith("HuggingFaceTB/SmolLM2-135M-Instruct")


def test_paper_parity_preprocessing_squashes_images_without_crop(demo, tiny_llava):
    """Recipe image_size: bicubic NxN with no crop before the processor (SEED v1 LAVIS 224, LLaVA wrapper 336)."""
    from mmbench_lib import tasks as benchmarks
    from mmbench_lib.pipeline.ranking import _request
    from mmbench_lib.tasks.recipes import get_recipe, paper_preprocess

    d = demo["seed"]
    item = benchmarks.get("seed").load(d["annotation_file"], d["image_root"], dimensions=[1])[0]
    wide = Image.new("RGB", (64, 32), (0, 0, 0))
    wide.paste((255, 255, 255), (0, 0, 16, 32))  # a white strip on the far left, lost by a centre crop
    squashed = paper_preprocess([wide], 32)[0]
    assert squashed.size == (32, 32) and squashed.getpixel((2, 16))[0] > 200
    plain = tiny_llava.processor.image_processor(wide, return_tensors="pt")["pixel_values"]
    parity = tiny_llava.processor.image_processor(squashed, return_tensors="pt")["pixel_values"]
    assert not torch.allclose(plain, parity)  # the processor alone centre-crops the strip away
    req = _request(item, tiny_llava, get_recipe("seed1-ppl", image_size=224))
    assert [im.size for im in req.images] == [(224, 224)]
    assert get_recipe("llava-chat-336").image_size == 336 and get_recipe("seed1-ppl-lavis224").reduction == "sum"


def test_read_only_model_cache_is_one_clear_line(tmp_path, monkeypatch):
    """A cache folder that cannot be written names itself and the variable that moves it."""
    import os

    from mmbench_lib.models import embedded

    if os.geteuid() == 0:  # root writes through permission bits: use a path under a file instead
        blocker = tmp_path / "not-a-dir"
        blocker.write_text("x")
        monkeypatch.setenv("MMBENCH_CACHE", str(blocker / "cache"))
    else:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        monkeypatch.setenv("MMBENCH_CACHE", str(ro / "cache"))
    with pytest.raises(RuntimeError, match="cannot write the model cache .*MMBENCH_CACHE") as e:
        embedded.converted_dir()
    assert "\n" not in str(e.value)
