"""The kv-decode path of batched generation (``mmbench_lib.models.cpu.kv_decode``): each mechanism gives the
token ids of one ``generate`` call per request.

Real components: the SmolLM2-135M-Instruct weights and the tiny random-weight LLaVA, fp32 on the CPU;
the demo MMMU / CMMMU prompts by the official prompt functions.
"""
from __future__ import annotations

import pytest
import torch

from mmbench_lib.core.requests import GenerateRequest
from mmbench_lib.models.cpu import kv_decode as kv
from mmbench_lib.models import load_adapter
from mmbench_lib.models.batching import BatchedGenerator, BatchPolicy
from tests.models.test_batched_generation import _items, _requests


def test_shared_prefix_leaves_every_row_a_token_of_its_own():
    assert kv.shared_prefix([[1, 2, 3, 4], [1, 2, 3, 5]]) == 3
    assert kv.shared_prefix([[1, 2, 3], [1, 2, 3, 4]]) == 2  # the shorter row keeps its last token
    assert kv.shared_prefix([[1, 2, 3], [1, 2, 3]]) == 2
    assert kv.shared_prefix([[1, 2, 9, 9], [1, 2, 9, 8]], stop_at=9) == 2  # image placeholders end the prefix
    assert kv.shared_prefix([[1, 2]]) == 0


def test_radix_tree_nodes_are_nested_shared_and_worth_computing():
    sys_ = list(range(100, 120))  # 20 shared tokens: a system turn
    stem_a, stem_b = list(range(200, 212)), list(range(300, 320))
    rows = [sys_ + stem_a + [1, 2], sys_ + stem_a + [3], sys_ + stem_a + [4, 5, 6],
            sys_ + stem_b + [7], sys_ + stem_b + [8], sys_ + [9, 9], sys_ + stem_a + [1, 2]]
    attach = kv.radix(rows, min_saving=16)
    root = attach[5]
    assert root is not None and root.depth == 20 and root.parent is None and root.users == 7
    a, b = attach[0], attach[3]
    assert a.parent is root and a.depth == 32 and a.users == 4 and a.tokens == rows[0][:32]
    assert b.parent is root and b.depth == 40 and b.users == 2  # (2 - 1) x 20 own tokens >= 16
    assert attach[1] is a and attach[2] is a and attach[4] is b
    # the two identical rows share all but their last token (a node of 1 own token saves too little)
    assert attach[6] is a and len(rows[6]) - attach[6].depth == 2
    for r, n in zip(rows, attach):
        assert r[:n.depth] == n.tokens and len(r) > n.depth
    assert kv.radix([[1, 2, 3]]) == [None]
    assert kv.radix([[1, 2, 3], [4, 5, 6]]) == [None, None]


def test_pack_bounds_padding_rows_and_tokens():
    lengths = [67, 58, 46, 45, 45, 44, 43, 43, 31, 31, 16, 1, 1, 1]
    batches = kv.pack(lengths, max_rows=4, max_tokens=150)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        longest = lengths[b[0]]
        assert len(b) <= 4 and len(b) * longest <= 150 or len(b) == 1
        assert all(lengths[i] >= 0.75 * longest for i in b) and longest == max(lengths[i] for i in b)


def _prefix_requests():
    """Chat prompts with a common system turn, two shared question stems, repeats, different lengths and limits."""
    stem_a = "Look at the table of monthly rainfall in the three cities and answer the question below. "
    stem_b = "Read the short poem about the sea carefully, then answer in one word. "
    qs = [stem_a + "Which city is the wettest?", stem_a + "Which month is the driest in the second city?",
          stem_a + "Which city is the wettest?", stem_b + "What colour is the sea?", stem_b + "Who is speaking?",
          "Name a prime number.", stem_a + "Give the total rainfall of the first city in words, then explain it."]
    return [GenerateRequest(f"p{i}", q, chat=True, max_new_tokens=12 if i % 2 else 7) for i, q in enumerate(qs)]


def test_smollm2_shared_prefixes_are_computed_once_and_give_the_same_tokens(smollm2):
    reqs = _prefix_requests()
    ref = smollm2.generate_ids(reqs, batched=False)
    smollm2.generator = gen = BatchedGenerator(BatchPolicy())
    assert smollm2.generate_ids(reqs) == ref
    assert gen.prefill_tokens < 0.6 * gen.prompt_tokens  # the system turn and the stems ran once
    smollm2.generator = plain = BatchedGenerator(BatchPolicy(share_prefix=False))
    assert smollm2.generate_ids(reqs) == ref
    assert plain.prefill_tokens >= plain.prompt_tokens


def test_smollm2_continuous_batching_refills_finished_rows(smollm2, demo):
    """A decode batch of 4 rows fed by prefill batches of 2: waiting prompts join as rows finish."""
    reqs = _requests(_items(demo, 10, 4), max_new_tokens=16)
    ref = smollm2.generate_ids(reqs, batched=False)
    smollm2.generator = gen = BatchedGenerator(BatchPolicy(max_rows=4, prefill_rows=2))
    assert smollm2.generate_ids(reqs) == ref
    w = gen.decode_widths
    assert max(w) <= 4 and any(b > a for a, b in zip(w, w[1:]))  # rows joined a running batch
    assert sum(gen.batches) == len(reqs) and max(gen.batches) <= 2
    assert gen.row_steps == sum(len(t) - 1 for t in ref)  # no step for a finished row


def test_tiny_llava_kv_decode_merges_image_counts_in_one_decode_batch(demo):
    """Rows with 1, 2 and more images are prefilled apart (the processor batches equal counts) and then
    decode together; extra stop tokens make rows end at different steps."""
    a = load_adapter("tiny-llava", device="cpu")
    assert a.kv_decode_reason() is None
    reqs = _requests(_items(demo, 12, 4), max_new_tokens=8, images=True)
    assert len({len(r.images) for r in reqs}) >= 2
    first = a.generate_ids(reqs, batched=False)
    a.model.generation_config.eos_token_id = [a.tokenizer.eos_token_id, first[0][2], first[1][4]]
    ref = a.generate_ids(reqs, batched=False)
    a.generator = gen = BatchedGenerator(BatchPolicy())
    assert a.generate_ids(reqs) == ref
    assert any(len(t) < 8 for t in ref)
    assert max(gen.decode_widths) > max(gen.batches)  # prefill batches joined one decode batch
    assert a.describe()["generation"]["decoder"].startswith("kv-decode")


def test_a_logits_processor_in_the_generation_config_falls_back_to_generate_with_its_reason(smollm2):
    reqs = _prefix_requests()[:4]
    cfg = smollm2.model.generation_config
    cfg.repetition_penalty = 1.3
    try:
        assert "repetition_penalty" in smollm2.kv_decode_reason()
        gen = smollm2.describe()["generation"]
        assert gen["decoder"] == "generate in chunks" and "repetition_penalty" in gen["decoder_note"]
        smollm2.generator = BatchedGenerator(BatchPolicy())
        assert smollm2.generate_ids(reqs) == smollm2.generate_ids(reqs, batched=False)
        assert smollm2.generator.decode_widths == []  # generate's own loop ran
    finally:
        cfg.repetition_penalty = 1.0
    assert smollm2.kv_decode_reason() is None


@pytest.mark.parametrize("spec", ["tiny-qwen2-vl", "tiny-paligemma", "tiny-blip2-opt"])
def test_families_outside_the_plain_position_list_name_their_reason(spec):
    gen = load_adapter(spec, device="cpu").describe()["generation"]
    assert gen["mode"] == "batched" and gen["decoder"] == "generate in chunks" and gen["decoder_note"]


def test_shift_rows_rolls_each_row_by_its_own_amount():
    t = torch.arange(12).reshape(2, 6)
    assert kv.shift_rows(t, [2, -1], 1).tolist() == [[4, 5, 0, 1, 2, 3], [7, 8, 9, 10, 11, 6]]
    assert kv.shift_rows(t, [0, 0], 1) is t


def test_tiny_llava_prefill_runs_without_a_padding_mask_and_matches_rows_alone(demo):
    """A left-padded processor batch runs with its padding at the right end and no attention mask (plain
    causal attention), then comes back left-padded: each row's first token and cache equal its own forward."""
    a = load_adapter("tiny-llava", device="cpu")
    reqs = _requests(_items(demo, 6), max_new_tokens=4, images=True, max_images=1)
    rendered = [a.render(r) for r in reqs]
    inputs = a.encode_batch([t for t, _, _ in rendered], [ims for _, ims, _ in rendered])
    assert (inputs["attention_mask"] == 0).any()  # prompts of different lengths: padding
    seen = []
    forward = a.model.forward
    a.model.forward = lambda *args, **kw: seen.append(kw.get("attention_mask")) or forward(*args, **kw)
    try:
        cache, mask, n, tok = kv.prefill_inputs(a.model, inputs)
    finally:
        del a.model.forward
    assert seen == [None]
    width = mask.shape[1]
    for j, (text, ims, _) in enumerate(rendered):
        alone = a.encode_batch([text], [ims])
        c1, _, n1, t1 = kv.prefill_inputs(a.model, alone)
        assert int(n[j]) == int(n1[0]) and int(tok[j]) == int(t1[0])
        for (k, v), (k1, v1) in zip(kv.cache_tensors(cache), kv.cache_tensors(c1)):
            assert torch.allclose(k[j, :, width - int(n[j]):], k1[0], atol=1e-5)
            assert torch.allclose(v[j, :, width - int(n[j]):], v1[0], atol=1e-5)
            assert not k[j, :, :width - int(n[j])].any()  # padding columns zeroed


def test_select_on_a_buffered_cache_keeps_the_rows_in_one_copy():
    rows, width, spare = 4, 6, 3
    parts = [[(torch.randn(rows, 2, width, 8), torch.randn(rows, 2, width, 8)) for _ in range(2)]]
    cache = kv.buffered_cache(parts, width, spare)
    mask = torch.ones(rows, width, dtype=torch.long)
    mask[1:3, :2] = 0  # rows 1 and 2 left-padded by 2, row 3 by 1
    mask[3, :1] = 0
    s = kv.Active([10, 11, 12, 13], cache, mask, torch.arange(rows), torch.arange(rows), [5, 5, 5, 5])
    out = kv.select(s, [1, 2])
    assert out.index == [11, 12] and out.width == width - 2  # two leading columns were padding in both rows
    for (k, v), (k0, v0) in zip(kv.cache_tensors(out.cache), parts[0]):
        assert torch.equal(k, k0[1:3, :, 2:]) and torch.equal(v, v0[1:3, :, 2:])
    assert all(layer.kbuf.shape[2] - layer.n >= spare for layer in out.cache.layers)  # room to decode in place
