"""A model spread over devices by accelerate scores and generates as on one device.

A CPU-only machine has one torch device (``cpu:1`` is ``cpu``), so the split is CPU + disk: the
modules mapped to ``"disk"`` keep their weights in ``offload_folder`` and accelerate's hooks load
them, and move their inputs to the execution device, at every forward; the first parameter of a
model whose embeddings are offloaded is on ``meta``. fp32 on the CPU: the same kernels run on the
same numbers, so predictions and generated tokens must agree exactly (log-likelihoods within the
derived bound of ``tests/scores.py``).
"""
from __future__ import annotations

import pytest
import torch
from PIL import Image

from mmbench_lib.core.requests import IMAGE, GenerateRequest, ScoreRequest
from mmbench_lib.models import load_adapter
from mmbench_lib.models.hf import HFCausalLM, ImageTextToText
from mmbench_lib.scoring.devices import input_device

from ..scores import assert_same_scores, tolerance

QUESTIONS = [
    ("What colour is the sky on a clear day?", [" Blue", " Blue with a few white clouds", " Green", " A brick wall"]),
    ("How many legs does a cat have?", [" Four", " Three", " Two legs", " None at all"]),
    ("Where do fish live?", [" In water", " Under the table near the window", " In a box", " Outside"]),
]
PROMPTS = ["Name a colour.", "What is 2 + 2? Answer briefly.", "Write one word about the sea.", "Say hello."]


def _score_requests(image=None):
    images = [image] if image is not None else []
    return [ScoreRequest(f"q{i}", f"{IMAGE}Question: {q}\nAnswer:", c, images, chat=i == 2)
            for i, (q, c) in enumerate(QUESTIONS)]


def _smol_map(n_layers: int) -> dict:
    """Embeddings, lm_head (tied to them) and the first half of the layers on the CPU; the rest on disk."""
    dm = {"model.embed_tokens": "cpu", "lm_head": "cpu", "model.rotary_emb": "cpu", "model.norm": "disk"}
    dm.update({f"model.layers.{i}": "cpu" if i < n_layers // 2 else "disk" for i in range(n_layers)})
    return dm


LLAVA_MAP = {"model.vision_tower": "disk", "model.multi_modal_projector": "cpu",
             "model.language_model.embed_tokens": "disk", "model.language_model.layers.0": "cpu",
             "model.language_model.layers.1": "disk", "model.language_model.norm": "cpu",
             "model.language_model.rotary_emb": "cpu", "lm_head": "disk"}


@pytest.fixture(scope="module")
def offload(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("MMBENCH_OFFLOAD_DIR", str(tmp_path_factory.mktemp("offload")))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def split_smol(offload, smollm2):
    return load_adapter("smollm2", scorer="shared-prefix", device_map=_smol_map(smollm2.model.config.num_hidden_layers))


@pytest.fixture(scope="module")
def split_llava(offload):
    return load_adapter("tiny-llava", scorer="shared-prefix", device_map=LLAVA_MAP)


def test_smollm2_split_over_cpu_and_disk_is_recorded(split_smol):
    model = split_smol.model
    offloaded = model.model.layers[-1].self_attn.q_proj.weight
    assert offloaded.device.type == "meta" and hasattr(model.model.layers[-1], "_hf_hook")  # really on disk
    d = split_smol.describe()
    assert d["device"] == "cpu"
    n = model.config.num_hidden_layers
    assert d["placement"]["modules"]["disk"] == ["model.norm", f"model.layers.{n // 2}-{n - 1}"]
    assert d["placement"]["n_modules"] == {"cpu": 3 + n // 2, "disk": 1 + n - n // 2}


def test_smollm2_split_engine_equals_reference(split_smol, smollm2):
    reqs = _score_requests()
    split_ref = HFCausalLM(split_smol.model, split_smol.tokenizer, "smollm2").score_choices(reqs)
    engine = split_smol.score_choices(reqs)
    assert_same_scores(split_ref, engine, split_smol.model)
    assert_same_scores(smollm2.score_choices(reqs), engine, smollm2.model)  # and the model on one device
    assert all(isinstance(s.sum_logprob, float) for q in engine for s in q)


def test_smollm2_split_batched_generation_equals_one_at_a_time(split_smol, smollm2):
    reqs = [GenerateRequest(f"g{i}", p, [], max_new_tokens=8, chat=True) for i, p in enumerate(PROMPTS)]
    one = split_smol.generate_ids(reqs, batched=False)
    assert split_smol.generate_ids(reqs) == one
    assert one == smollm2.generate_ids(reqs, batched=False)


def test_llava_with_offloaded_embeddings_takes_inputs_on_their_execution_device(split_llava):
    model = split_llava.model
    assert next(model.parameters()).device.type == "meta"  # model.device would send inputs to meta
    assert model.get_input_embeddings().weight.device.type == "meta"
    assert input_device(model) == torch.device("cpu") == split_llava.device
    assert split_llava.describe()["placement"]["n_modules"] == {"disk": 4, "cpu": 4}


def test_llava_split_engine_equals_reference_and_generation_batches(split_llava, tiny_llava):
    image = Image.new("RGB", (40, 30), (200, 30, 30))
    reqs = _score_requests(image)
    ref = ImageTextToText(split_llava.model, split_llava.processor, "tiny-llava").score_choices(reqs)
    engine = split_llava.score_choices(reqs)
    assert_same_scores(ref, engine, split_llava.model)
    assert_same_scores(tiny_llava.score_choices(reqs), engine, tiny_llava.model)  # same seeded weights, one device
    gens = [GenerateRequest(f"g{i}", f"{IMAGE}{p}", [image], max_new_tokens=6, chat=True) for i, p in enumerate(PROMPTS)]
    one = split_llava.generate_ids(gens, batched=False)
    assert split_llava.generate_ids(gens) == one
    assert one == tiny_llava.generate_ids(gens, batched=False)


def test_bfloat16_on_the_cpu_scores_and_generates():
    """bf16 keeps 8 mantissa bits (unit roundoff 2^-8 against fp32's 2^-24). The engine (batched,
    cached) and the reference (one row per choice) order the same sums differently, so their bf16
    log-likelihoods agree only within the bf16 bound of ``core.numerics.logprob_tolerance``, and a
    prediction may flip where two choices are closer than that; likewise greedy tokens of a padded
    batch may flip at a near tie (measured here: batched and one-at-a-time bf16 outputs differ on
    these prompts). Checked: both paths run in bf16, the dtype is recorded, scores come out as
    Python floats (log-softmax in float32) and engine and reference agree within the bf16 bound (a
    worst-case bound: tens of nats for this 30-layer model, so no prediction is compared to fp32)."""
    bf = load_adapter("smollm2", scorer="shared-prefix", dtype="bfloat16")
    assert bf.describe()["dtype"] == "torch.bfloat16" and next(bf.model.parameters()).dtype == torch.bfloat16
    reqs = _score_requests()
    got = bf.score_choices(reqs)
    ref = HFCausalLM(bf.model, bf.tokenizer, "smollm2").score_choices(reqs)
    for q_bf, q_ref in zip(got, ref):
        assert [s.num_tokens for s in q_bf] == [s.num_tokens for s in q_ref]
        for e, r in zip(q_bf, q_ref):
            assert isinstance(e.sum_logprob, float) and e.sum_logprob < 0
            assert abs(e.sum_logprob - r.sum_logprob) <= tolerance(bf.model, r, "bfloat16")
    gens = [GenerateRequest(f"g{i}", p, [], max_new_tokens=6, chat=True) for i, p in enumerate(PROMPTS)]
    for out in (bf.generate_ids(gens), bf.generate_ids(gens, batched=False)):
        assert len(out) == len(gens) and all(1 <= len(t) <= 6 for t in out)
