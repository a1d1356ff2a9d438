"""Batched greedy generation gives the token ids of one ``generate`` call per request.

Real components: the SmolLM2-135M-Instruct weights and tiny random-weight transformers models of
every family, on the demo MMMU and CMMMU prompts (official prompt functions), fp32 on the CPU.
"""
from __future__ import annotations

import pytest
import torch

from mmbench_lib.core.requests import GenerateRequest
from mmbench_lib.models import load_adapter
from mmbench_lib.models.batching import BatchedGenerator, BatchPolicy, plan_batches
from mmbench_lib.pipeline.generation import build_prompt, load_visual_inputs
from mmbench_lib.tasks import cmmmu, mmmu

FAMILIES = ["tiny-llava", "tiny-llava-next", "tiny-llava-onevision", "tiny-idefics3", "tiny-qwen2-vl",
            "tiny-qwen2.5-vl", "tiny-paligemma", "tiny-blip2-opt", "tiny-blip2-t5", "tiny-instructblip-t5"]


def _items(demo, n_mmmu=None, n_cmmmu=None):
    a = mmmu.load(demo["mmmu"]["source"], split="validation")
    b = cmmmu.load(demo["cmmmu"]["root"], split="val")
    return a[:n_mmmu] + b[:n_cmmmu]


def _requests(items, max_new_tokens, images=False, max_images=None):
    out = []
    for it in items:
        ims = load_visual_inputs(it) if images else []
        if max_images is not None and len(ims) > max_images:
            continue
        out.append(GenerateRequest(it.id, build_prompt(it)[0], ims, max_new_tokens=max_new_tokens))
    return out


def test_plan_batches_groups_sorts_and_keeps_the_budget():
    keys = ["a", "b", "a", "a", "b", "a"]
    lengths = [10, 50, 30, 20, 5, 40]
    batches = plan_batches(keys, lengths, [4] * 6, BatchPolicy(token_budget=100, max_rows=8))
    assert sorted(i for b in batches for i in b) == list(range(6))
    for b in batches:
        assert len({keys[i] for i in b}) == 1
        assert [lengths[i] for i in b] == sorted((lengths[i] for i in b), reverse=True)
        assert len(b) * (lengths[b[0]] + 4) <= 100 or len(b) == 1
    assert [lengths[i] for i in batches[0]] == [40, 30]  # 3 x 44 > 100


def test_smollm2_batched_equals_one_at_a_time_on_demo_prompts(smollm2, demo):
    """All MMMU and CMMMU demo prompts, 16 new tokens as the notebooks: the same token ids."""
    reqs = _requests(_items(demo), max_new_tokens=16)
    smollm2.generator = BatchedGenerator(BatchPolicy())
    ref = smollm2.generate_ids(reqs, batched=False)
    got = smollm2.generate_ids(reqs)
    assert got == ref
    gen = smollm2.generator
    assert max(gen.batches) > 1 and sum(gen.batches) == len(reqs)
    lengths = [len(t) for t in ref]
    assert min(lengths) < 16 and max(lengths) == 16  # answers end at different steps ...
    assert gen.row_steps < sum(gen.batches) * 16  # ... and finished rows left their batch
    assert smollm2.generate(reqs[:3]) == smollm2.generate_one_at_a_time(reqs[:3])


def test_smollm2_mixed_requests_come_back_in_input_order(smollm2):
    reqs = [GenerateRequest("a", "Name a colour.", chat=True, max_new_tokens=6),
            GenerateRequest("b", "Question: 2+2=?\nAnswer:", chat=False, max_new_tokens=4),
            GenerateRequest("c", "Write a long sentence about the sea and the sky.", chat=True, max_new_tokens=6),
            GenerateRequest("d", "The capital of France is", chat=False, max_new_tokens=4)]
    smollm2.generator = BatchedGenerator(BatchPolicy())
    assert smollm2.generate_ids(reqs) == smollm2.generate_ids(reqs, batched=False)
    gen = smollm2.generator
    assert sum(gen.batches) == 4  # prefill batches never mix the chat flag (tokenised differently) ...
    assert max(gen.decode_widths) >= 3  # ... but chat and plain rows, 6 and 4 new tokens, decode in one batch


@pytest.mark.parametrize("spec", FAMILIES)
def test_family_batched_equals_one_at_a_time(spec, demo):
    """Demo prompts with their images; extra stop tokens (taken from the reference outputs) make rows
    end at different steps, so dropping finished rows (and each family's cache state) is exercised."""
    a = load_adapter(spec, device="cpu")
    reqs = _requests(_items(demo, 5, 3), max_new_tokens=8, images=True, max_images=getattr(a, "max_images", None))
    assert len(reqs) >= 6
    first = a.generate_ids(reqs, batched=False)
    eos = a.tokenizer.eos_token_id
    extra = {first[0][2], first[min(2, len(first) - 1)][5]} - {eos}
    for m in (a.model, getattr(a.model, "language_model", None)):  # BLIP-2 generates through its LM
        if getattr(m, "generation_config", None) is not None:
            m.generation_config.eos_token_id = [eos, *sorted(extra)]
    ref = a.generate_ids(reqs, batched=False)
    a.generator = BatchedGenerator(BatchPolicy())
    got = a.generate_ids(reqs)
    assert got == ref
    assert any(len(t) < 8 for t in ref)
    assert max(a.generator.batches) > 1
    assert a.generate(reqs) == a.generate_one_at_a_time(reqs)
    gen = a.describe()["generation"]
    assert gen["mode"] == "batched"
    if spec in ("tiny-blip2-opt", "tiny-blip2-t5", "tiny-instructblip-t5"):
        assert gen["chunk"] == 0 and gen["chunk_note"]


class _OOMAbove:
    """The model, but ``generate`` and forward calls raise out-of-memory for batches larger than ``k`` rows."""

    def __init__(self, model, k, kind):
        self._model, self.k, self.kind, self.ok_batches = model, k, kind, []

    def __getattr__(self, name):
        return getattr(self._model, name)

    def _check(self, kw):
        b = len(kw["flat_plan"].segments) if "flat_plan" in kw else kw["input_ids"].shape[0]  # rows, or prompts end to end
        if b > self.k:
            if self.kind == "cuda":
                raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
            raise RuntimeError("CUDA error: out of memory")
        self.ok_batches.append(b)

    def generate(self, **kw):
        self._check(kw)
        return self._model.generate(**kw)

    def __call__(self, **kw):  # the kv-decode path runs forwards
        self._check(kw)
        return self._model(**kw)


@pytest.mark.parametrize("flat", [True, False], ids=["end-to-end", "padded"])
@pytest.mark.parametrize("kind", ["cuda", "runtime"])
def test_out_of_memory_halves_the_batch_and_keeps_the_outputs(smollm2, kind, flat):
    """Padded prefill: the batch halves to the 2 rows that fit. End to end (one forward holds the rows and
    the shared prefix they need, each a segment): halving stops where the rows and the prefix fit."""
    reqs = [GenerateRequest(f"q{i}", f"Say the number {i} in words.", max_new_tokens=5) for i in range(7)]
    ref = smollm2.generate_ids(reqs, batched=False)
    model = smollm2.model
    smollm2.model = spy = _OOMAbove(model, 2, kind)
    try:
        smollm2.generator = BatchedGenerator(BatchPolicy(max_rows=8, flat_prefill=flat))
        got = smollm2.generate_ids(reqs)
    finally:
        smollm2.model = model
    assert got == ref
    g = smollm2.generator
    assert g.oom_events >= 2 and all(b <= g.max_rows for b in g.batches)
    assert g.max_rows == 2 if not flat else 1 <= g.max_rows <= 2
    assert spy.ok_batches and all(b <= 2 for b in spy.ok_batches)


def test_other_errors_are_raised(smollm2):
    class Broken(_OOMAbove):
        def generate(self, **kw):
            raise ValueError("boom")

        __call__ = generate

    reqs = [GenerateRequest(f"q{i}", "Hi", max_new_tokens=2) for i in range(3)]
    model = smollm2.model
    smollm2.model = Broken(model, 1, "cuda")
    try:
        smollm2.generator = BatchedGenerator(BatchPolicy())
        with pytest.raises(ValueError, match="boom"):
            smollm2.generate_ids(reqs)
        assert smollm2.generator.oom_events == 0
    finally:
        smollm2.model = model


def test_a_family_that_cannot_batch_generates_one_at_a_time_with_its_reason(tiny_llava):
    calls = []
    model = tiny_llava.model
    hook = model.register_forward_pre_hook(lambda m, a, kw: calls.append(kw["input_ids"].shape[0]), with_kwargs=True)
    tiny_llava.batch_unsupported = "test: batched logits differ"
    try:
        from PIL import Image

        reqs = [GenerateRequest(f"q{i}", "Describe it." * (i + 1), [Image.new("RGB", (32, 32))], max_new_tokens=2)
                for i in range(3)]
        tiny_llava.generate(reqs)
        assert calls and set(calls) == {1}
        assert tiny_llava.describe()["generation"] == {"mode": "one request at a time",
                                                       "reason": "test: batched logits differ"}
    finally:
        hook.remove()
        del tiny_llava.batch_unsupported


@pytest.mark.parametrize("spec", ["smollm2", "tiny-llava"])
def test_bf16_batched_generation_runs_and_is_well_formed(spec, demo):
    a = load_adapter(spec, device="cpu", dtype="bfloat16")
    a.model.to(torch.bfloat16)  # tiny models are built in fp32
    assert a.describe()["dtype"] == "torch.bfloat16"
    reqs = _requests(_items(demo, 4, 2), max_new_tokens=6, images=a.sees_images)
    out = a.generate(reqs)
    assert len(out) == len(reqs) and max(a.generator.batches) > 1
    for g in out:
        assert isinstance(g.text, str) and 1 <= g.num_tokens <= 6 and isinstance(g.hit_limit, bool)
        assert not g.hit_limit or g.num_tokens == 6
