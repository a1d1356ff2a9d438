"""Native video input: SEED video items reach Qwen2-VL / Qwen2.5-VL / LLaVA-OneVision as ONE clip of the
officially sampled frames (the processor's ``videos=``), other families as frames-as-images, unchanged.

Tiny random-weight models of the real transformers classes (``tests.tiny_models``), the demo
sets' real video files (SEED v1 dims 10-12: decoded by the official 8-frame rule) and shipped frames
(SEED-2 dims 19-22). Engine vs reference: same predictions under both reductions, log-likelihoods
within the derived fp32 bound (``tests.scores``).
"""
import json

import pytest
import torch

from mmbench_lib.core.media import load_visual_inputs
from mmbench_lib.core.requests import ScoreRequest, Video
from mmbench_lib.core.video import selected_frames
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig
from mmbench_lib.pipeline.ranking import set_video_input, visual_inputs
from mmbench_lib.tasks.recipes import get_recipe, score_request

from ..scores import assert_same_scores
from .test_families import adapter

#: Qwen3-VL: SEED-2's shipped frames have no frame rate; its processor writes each temporal patch's time from the
#: frames' indices (missing before: every SEED-2 video item failed)
NATIVE = ["tiny-qwen2-vl", "tiny-qwen2.5-vl", "tiny-llava-onevision", "tiny-llava-next-video", "tiny-qwen3-vl",
          "tiny-qwen3-vl-moe"]
#: the video placeholder token each native family's processor expands
VIDEO_TOKEN = {"tiny-qwen2-vl": "<|video_pad|>", "tiny-qwen2.5-vl": "<|video_pad|>", "tiny-qwen3-vl": "<|video_pad|>",
               "tiny-qwen3-vl-moe": "<|video_pad|>", "tiny-llava-onevision": "<video>",
               "tiny-llava-next-video": "<video>"}
IMAGE_TOKEN = {"tiny-qwen2-vl": "<|image_pad|>", "tiny-qwen2.5-vl": "<|image_pad|>", "tiny-qwen3-vl": "<|image_pad|>",
               "tiny-qwen3-vl-moe": "<|image_pad|>", "tiny-llava-onevision": "<image>",
               "tiny-llava-next-video": "<image>"}
#: LLaVA-style video tokens: 32/8 = 4x4 patches per frame, 2x2-pooled to 4, plus OneVision's one newline token
POOLED_PER_FRAME, NEWLINE = 4, {"tiny-llava-onevision": 1, "tiny-llava-next-video": 0}


@pytest.fixture(scope="module")
def seed1_video(demo):
    return runs.load_items("seed", runs.demo_args("seed", demo, dimensions="video"))


@pytest.fixture(scope="module")
def seed2_video(demo):
    items = runs.load_items("seed2", runs.demo_args("seed2", demo, level="L1"))
    return [it for it in items if it.dimension_id in (19, 20, 21, 22)]


def _native(spec, scorer="reference"):
    a = adapter(spec, scorer)
    assert a.set_video_input("native") == "native"
    return a


def _requests(items, a, recipe="seed1-ppl"):
    r = get_recipe(recipe)
    return [score_request(it, r, *visual_inputs(it, a, r.image_size)) for it in items]


def test_seed1_demo_covers_the_three_video_dimensions(seed1_video):
    assert {it.dimension_id for it in seed1_video} == {10, 11, 12} and all(it.video for it in seed1_video)


@pytest.mark.parametrize("spec", NATIVE)
def test_native_family_gets_one_clip_of_the_official_frames(spec, seed1_video):
    a = _native(spec)
    tok = a.processor.tokenizer
    for it, req in zip(seed1_video, _requests(seed1_video, a)):
        # the clip is the frames the official rule selects (docs/protocols.md §1.4 items 6-7), with their indices
        assert req.images == [] and isinstance(req.video, Video)
        _, fps, idx = selected_frames(it.video.path, it.video.rule, it.video.segment)
        assert req.video.indices == idx and len(req.video.frames) == len(idx)
        assert req.video.fps == pytest.approx(fps * (len(idx) - 1) / (idx[-1] - idx[0]))
        enc = a.prepare(req).inputs
        if "second_per_grid_ts" in enc:  # Qwen2.5-VL: seconds per temporal patch of 2 frames, from the clip's rate
            assert enc["second_per_grid_ts"].tolist() == pytest.approx([2 / req.video.fps])
        assert "pixel_values_videos" in enc and "pixel_values" not in enc  # videos=, not eight images
        ids = enc["input_ids"][0].tolist()
        assert ids.count(tok.convert_tokens_to_ids(IMAGE_TOKEN[spec])) == 0
        n_video = ids.count(tok.convert_tokens_to_ids(VIDEO_TOKEN[spec]))
        if "video_grid_thw" in enc:  # Qwen: temporal patches of 2 frames, 2x2 spatial merge
            t, h, w = enc["video_grid_thw"][0].tolist()
            assert t == (len(idx) + 1) // 2 and n_video == t * h * w // 4
        else:
            assert n_video == len(idx) * POOLED_PER_FRAME + NEWLINE[spec]
    assert a.describe()["video_input"] == "native"


@pytest.mark.parametrize("spec", NATIVE)
def test_seed1_video_items_engine_matches_reference(spec, seed1_video):
    ref_a, eng_a = _native(spec), _native(spec, "shared-prefix")
    reqs = _requests(seed1_video, ref_a)
    ref = ref_a.score_choices(reqs)
    assert_same_scores(ref, eng_a.score_choices(reqs), eng_a.model)  # questions batched, caches stacked
    assert_same_scores(ref[:1], eng_a.score_choices(reqs[:1]), eng_a.model)  # and one alone


@pytest.mark.parametrize("spec", NATIVE)
def test_seed2_video_dimensions_engine_matches_reference(spec, seed2_video):
    assert {it.dimension_id for it in seed2_video} == {19, 20, 21, 22}
    ref_a, eng_a = _native(spec), _native(spec, "shared-prefix")
    reqs = _requests(seed2_video, ref_a, "llava-chat")  # SEED-2's LLaVA wrapper recipe: chat template, mean
    assert all(r.video is not None and r.video.indices is None and len(r.video.frames) == 8 for r in reqs)
    assert_same_scores(ref_a.score_choices(reqs), eng_a.score_choices(reqs), eng_a.model)


@pytest.mark.parametrize("spec", ["tiny-qwen2-vl", "tiny-llava-onevision"])
def test_the_clip_enters_the_computation_in_time_order(spec, seed1_video):
    a = _native(spec)
    [req] = _requests(seed1_video[:1], a)
    backwards = ScoreRequest("r", req.prompt, req.continuations, video=Video(req.video.frames[::-1]))
    [fwd], [bwd] = a.score_choices([req]), a.score_choices([backwards])
    assert fwd[0].sum_logprob != pytest.approx(bwd[0].sum_logprob, abs=1e-4)


def test_frames_path_unchanged_for_llava(tiny_llava, seed1_video):
    """LLaVA-1.5 has no video processor: native is refused with the reason, frames go as images exactly as
    before (the old request: still images + frames, no clip), so its scores are the old scores."""
    used = set_video_input(tiny_llava, "native")
    assert used["used"] == "frames" and "no native video path" in used["note"]
    assert "no native video path" in tiny_llava.describe()["video_input_note"]
    recipe = get_recipe("seed1-ppl")
    new = _requests(seed1_video, tiny_llava)
    old = [score_request(it, recipe, load_visual_inputs(it)) for it in seed1_video]
    for n, o in zip(new, old):
        assert n.video is None and len(n.images) == len(o.images) > 1
        assert all(x.tobytes() == y.tobytes() for x, y in zip(n.images, o.images))
    assert tiny_llava.score_choices(new) == tiny_llava.score_choices(old)


def test_frames_can_be_forced_on_a_native_family(seed1_video):
    a = adapter("tiny-qwen2-vl")
    try:
        assert set_video_input(a, "frames") == {"requested": "frames", "used": "frames"}
        [req] = _requests(seed1_video[:1], a)
        assert req.video is None and len(req.images) == 8
        assert "pixel_values" in a.prepare(req).inputs and "pixel_values_videos" not in a.prepare(req).inputs
        with pytest.raises(ValueError, match="frames as images"):
            a.prepare(ScoreRequest("v", "Q", [" a"], video=Video(req.images)))
    finally:
        a.set_video_input("native")


@pytest.mark.parametrize("spec", NATIVE)
def test_batched_generation_on_clips_matches_one_at_a_time(spec, seed1_video):
    from mmbench_lib.tasks.recipes import generate_request

    a = _native(spec)
    recipe = get_recipe("lmms-eval-gen")
    media = [visual_inputs(it, a) for it in seed1_video[:4]]
    reqs = [generate_request(it, recipe, images, 4, video) for it, (images, video) in zip(seed1_video, media)]
    assert all(r.video is not None for r in reqs)
    assert a.generate_ids(reqs) == a.generate_ids(reqs, batched=False)


def test_run_records_the_video_path(demo, tmp_path):
    data = runs.demo_args("seed", demo, dimensions=[10])
    a = adapter("tiny-qwen2-vl")
    metrics = runs.evaluate(RunConfig("seed", tmp_path / "n", data=data, model="tiny-qwen2-vl", device="cpu", limit=2,
                                      progress=False), a)
    man = json.loads((tmp_path / "n" / "manifest.json").read_text())
    assert man["video_input"] == {"requested": "native", "used": "native"} and metrics["video_input"] == "native"
    assert man["model"]["video_input"] == "native" and man["spec"]["model"]["video_input"] == "native"
    rows = [json.loads(x) for x in (tmp_path / "n" / "predictions.jsonl").read_text().splitlines()]
    assert [r["video_input"] for r in rows] == ["native", "native"]
    with pytest.raises(ValueError, match="video items went in as 'native'"):  # resuming must not mix paths
        runs.evaluate(RunConfig("seed", tmp_path / "n", data=data, model="tiny-qwen2-vl", device="cpu", limit=2,
                                progress=False, video_input="frames"), a)
    a.set_video_input("native")
    with pytest.raises(ValueError, match="model.video_input"):
        RunConfig("seed", tmp_path / "x", data=data, video_input="clip")


def test_set_video_input_on_a_text_only_model(smollm2):
    assert set_video_input(smollm2, "native")["used"] == "none"
    with pytest.raises(ValueError, match="video_input"):
        set_video_input(smollm2, "both")
