"""Prefill end to end (``mmbench_lib.models.cpu.flat_prefill``): many prompt segments in one forward of
batch 1, attention kept apart per segment, shared prefixes computed in the same forward.

Real components: SmolLM2-135M-Instruct's weights and tokenizer, the demo MMMU / CMMMU prompts by the
official prompt functions, transformers' own SDPA attention. Log-probabilities are compared within
``core.numerics.logprob_tolerance`` (30 layers, the widest dot product); greedy tokens exactly.
"""
from __future__ import annotations

import pytest
import torch

from mmbench_lib.core.numerics import logprob_tolerance, network_shape
from mmbench_lib.models.cpu import flat_prefill as fp
from mmbench_lib.models.cpu import kv_decode as kv
from mmbench_lib.models.batching import BatchedGenerator, BatchPolicy
from tests.models.test_batched_generation import _items, _requests
from tests.models.test_kv_decode import _prefix_requests


def _ids(adapter, req):
    text, _, key = adapter.render(req)
    return adapter.token_ids(text, key)


def _alone(model, ids):
    with torch.inference_mode():
        return torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, -1].double(), -1)


def _agree(model, got_logits, want_logprobs, seq_len):
    got = torch.log_softmax(got_logits.double(), -1)
    top = int(want_logprobs.argmax())
    assert int(got.argmax()) == top
    depth, width = network_shape(model, seq_len)
    value = float(want_logprobs[top])
    assert abs(float(got[top]) - value) <= logprob_tolerance(1, value, "float32", depth, width)


def test_each_segment_gets_the_logits_of_its_prompt_alone(smollm2, demo):
    model = smollm2.model
    rows = [_ids(smollm2, r) for r in _requests(_items(demo, 3, 2), 4)]
    assert len({len(r) for r in rows}) > 1  # different lengths, no padding between them
    plan, logits = fp.prefill_flat(model, [fp.Segment(r) for r in rows], "cpu")
    n_layers = model.config.num_hidden_layers
    for j, r in enumerate(rows):
        _agree(model, logits[j], _alone(model, r), len(r))
        assert len(plan.kv[j]) == n_layers and plan.kv[j][0][0].shape[2] == len(r)
    assert model.config._attn_implementation == "sdpa"  # switched for the forward only


def test_a_prefix_in_the_same_forward_serves_the_rows_below_it(smollm2):
    """A shared prefix and two rows after it in one forward: the rows see the prefix's keys as their
    layer computes them, exactly as a row after a prefix computed before (and as the prompt alone)."""
    model = smollm2.model
    reqs = _prefix_requests()
    a, b = _ids(smollm2, reqs[0]), _ids(smollm2, reqs[1])
    p = kv.shared_prefix([a, b])
    assert p > 10
    plan, logits = fp.prefill_flat(model, [fp.Segment(a[:p]), fp.Segment(a[p:], [0], p), fp.Segment(b[p:], [0], p)],
                                   "cpu")
    _agree(model, logits[1], _alone(model, a), len(a))
    _agree(model, logits[2], _alone(model, b), len(b))
    prefix = [(k.clone(), v.clone()) for k, v in plan.kv[0]]
    _, again = fp.prefill_flat(model, [fp.Segment(b[p:], [prefix], p)], "cpu")
    _agree(model, again[0], _alone(model, b), len(b))


def _tiny_causal_lm(model_type: str):
    import transformers

    cfg = transformers.AutoConfig.for_model(
        model_type, vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, max_position_embeddings=512, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa").eval()


@pytest.mark.parametrize("model_type", sorted(fp.FLAT_TYPES))
def test_every_family_listed_prefills_end_to_end_like_each_prompt_alone(model_type):
    """Tiny random-weight models of each listed family (transformers' own classes): a prefix and a row after
    it in the same forward, and two prompts without one, give the logits of each prompt alone."""
    model = _tiny_causal_lm(model_type)
    assert fp.flat_reason(model) is None
    g = torch.Generator().manual_seed(1)
    rows = [torch.randint(5, 290, (n,), generator=g).tolist() for n in (9, 4, 13)]
    segs = [fp.Segment(rows[0][:5]), fp.Segment(rows[0][5:], [0], 5), fp.Segment(rows[1]), fp.Segment(rows[2])]
    _, logits = fp.prefill_flat(model, segs, "cpu")
    for i, r in zip((1, 2, 3), rows):
        _agree(model, logits[i], _alone(model, r), len(r))


def test_a_family_that_drops_the_attention_arguments_is_refused_with_its_reason():
    model = _tiny_causal_lm("stablelm")
    assert "stablelm" in fp.flat_reason(model)
    with pytest.raises(RuntimeError, match="did not pass the forward's arguments"):
        fp.prefill_flat(model, [fp.Segment([5, 6, 7]), fp.Segment([8, 9])], "cpu")
    assert model.config._attn_implementation == "sdpa"  # restored after the error


def test_other_attention_implementations_keep_the_padded_prefill(smollm2):
    model = smollm2.model
    assert fp.flat_reason(model) is None
    model.config._attn_implementation = "eager"
    try:
        assert "eager" in fp.flat_reason(model)
    finally:
        model.config._attn_implementation = "sdpa"


@pytest.mark.parametrize("policy", [BatchPolicy(), BatchPolicy(prefill_tokens=120), BatchPolicy(max_rows=3)],
                         ids=["one-forward", "token-budget", "three-rows"])
def test_batched_generation_prefilled_end_to_end_equals_one_at_a_time(smollm2, demo, policy):
    """The demo prompts and prompts sharing a system turn and question stems at several tree depths:
    prefixes computed with the first rows that need them and reused by later forwards."""
    reqs = _requests(_items(demo, 6, 4), max_new_tokens=10) + _prefix_requests()
    ref = smollm2.generate_ids(reqs, batched=False)
    smollm2.generator = gen = BatchedGenerator(policy)
    assert smollm2.generate_ids(reqs) == ref
    assert gen.describe()["flat_prefill_used"] is True
    assert gen.prefill_tokens < gen.prompt_tokens  # shared prefixes once, no padding
    if policy.prefill_tokens < 1000 or policy.max_rows < 10:
        assert len(gen.batches) > 1
    smollm2.generator = off = BatchedGenerator(BatchPolicy(flat_prefill=False))
    assert smollm2.generate_ids(reqs) == ref
    assert off.describe()["flat_prefill_note"].startswith("off")
    smollm2.generator = BatchedGenerator(BatchPolicy())
