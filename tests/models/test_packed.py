"""Linear layers on MKL-packed weights (``mmbench_lib.models.cpu.packed``), the fp32 CPU path of batched
generation: each product within the rounding bound of the plain one, the checked layout, the
reasons a model stays unpacked, restored layers, and the same greedy tokens as one ``generate``
call per request.

Real components: SmolLM2-135M-Instruct's weights and PyTorch's MKL ops; where PyTorch has no MKL
(an aarch64 build) the packed-path tests skip with that reason and the fallback test still runs.
"""
from __future__ import annotations

import pytest
import torch

from mmbench_lib.models.cpu import packed
from mmbench_lib.models.batching import BatchedGenerator, BatchPolicy
from tests.models.test_batched_generation import _items, _requests

needs_mkl = pytest.mark.skipif(not packed.mkl_ops_available(), reason="PyTorch on this machine has no MKL packed GEMM")


def test_rounding_bound_is_twice_gamma_k_times_the_row_norms():
    x = torch.tensor([[1.0, -2.0]])
    w = torch.tensor([[3.0, 4.0], [0.5, 0.0]])
    u = 2.0 ** -24
    gamma2 = 2 * u / (1 - 2 * u)
    bound = packed.rounding_bound(x, w)
    assert bound.shape == (1, 2)
    assert bound[0, 0].item() == pytest.approx(2 * gamma2 * 5 ** 0.5 * 5.0, rel=1e-12)  # |x| = sqrt(5), |w0| = 5
    assert bound[0, 1].item() == pytest.approx(2 * gamma2 * 5 ** 0.5 * 0.5, rel=1e-12)
    assert bound[0, 0].item() >= 2 * gamma2 * 11.0  # never below the componentwise bound, sum |x_i w_i| = 11


@needs_mkl
def test_packed_products_stay_within_the_rounding_bound_of_the_plain_ones(smollm2):
    """Every weight shape of SmolLM2 (attention, MLP, the 49k-token head), at row counts the decode and
    prefill batches take; one row keeps the plain kernel, so it is the reference's own result."""
    gen = torch.Generator().manual_seed(1)
    shapes = {}
    for m in packed.linears(smollm2.model):
        shapes.setdefault(tuple(m.weight.shape), m)
    assert len(shapes) >= 4
    for m in shapes.values():
        w = m.weight.detach()
        pack = torch.ops.mkl._mkl_reorder_linear_weight(w, packed.PACK_ROWS)
        for rows in (1, 2, 7, 24, 300):
            x = torch.randn(rows, w.shape[1], generator=gen)
            got = packed.packed_matmul(x, pack, w, None)
            want = torch.nn.functional.linear(x, w)
            if rows == 1:
                assert torch.equal(got, want)
            else:
                assert ((got.double() - want.double()).abs() <= packed.rounding_bound(x, w)).all()


@needs_mkl
def test_a_pack_that_does_not_multiply_like_its_weight_is_refused():
    gen = torch.Generator().manual_seed(2)
    w = torch.randn(64, 32, generator=gen)
    other = torch.randn(64, 32, generator=gen)
    assert packed._check_layout(w, torch.ops.mkl._mkl_reorder_linear_weight(w, packed.PACK_ROWS)) is None
    reason = packed._check_layout(w, torch.ops.mkl._mkl_reorder_linear_weight(other, packed.PACK_ROWS))
    assert reason is not None and "(64, 32)" in reason and "rows" in reason


@needs_mkl
def test_the_context_routes_every_linear_and_restores_them(smollm2):
    model = smollm2.model
    x = torch.randn(3, 5, model.config.hidden_size)
    layer = model.model.layers[0].mlp.up_proj
    plain = layer(x)
    with packed.packed_linears(model) as reason:
        assert reason is None
        assert all("forward" in m.__dict__ for m in packed.linears(model))
        with packed.packed_linears(model) as inner:  # nested: the outer routing stays
            assert inner is None
        assert all("forward" in m.__dict__ for m in packed.linears(model))
        got = layer(x)
        assert ((got.double() - plain.double()).abs() <= packed.rounding_bound(x.reshape(-1, x.shape[-1]),
                                                                                layer.weight).reshape(got.shape)).all()
    assert not any("forward" in m.__dict__ or hasattr(m, "_mmbench_packed") for m in packed.linears(model))
    assert torch.equal(layer(x), plain)


@needs_mkl
def test_packs_follow_a_changed_weight():
    lin = torch.nn.Linear(32, 48, bias=True)
    model = torch.nn.Sequential(lin)
    x = torch.randn(6, 32)
    with packed.packed_linears(model) as reason:
        assert reason is None
        before = model(x)
    with torch.no_grad():
        lin.weight.mul_(2.0)
    with packed.packed_linears(model):
        after = model(x)
    want = torch.nn.functional.linear(x, lin.weight, lin.bias)
    assert ((after.double() - want.double()).abs() <= packed.rounding_bound(x, lin.weight) + 1e-6).all()
    assert not torch.allclose(before, after)


def test_models_that_cannot_be_packed_say_why(monkeypatch):
    lin = torch.nn.Sequential(torch.nn.Linear(8, 8))
    with packed.packed_linears(lin, enabled=False) as reason:
        assert reason.startswith("off")
    if not packed.mkl_ops_available():
        with packed.packed_linears(lin) as reason:
            assert "MKL" in reason
        return
    assert packed.ineligible_reason(lin) is None
    assert "fp32" in packed.ineligible_reason(torch.nn.Sequential(torch.nn.Linear(8, 8)).to(torch.bfloat16))
    dispatched = torch.nn.Sequential(torch.nn.Linear(8, 8))
    dispatched.hf_device_map = {"": "cpu"}
    assert "dispatched" in packed.ineligible_reason(dispatched)
    monkeypatch.setattr(packed, "available_memory", lambda: 1000)
    assert "GiB" in packed.ineligible_reason(lin)
    with packed.packed_linears(lin) as reason:
        assert "GiB" in reason
        assert "forward" not in lin[0].__dict__


def test_smollm2_batched_tokens_are_the_same_packed_or_not(smollm2, demo, monkeypatch):
    """Packed weights on (where MKL is present), off by policy, and refused by a failed layout check:
    the same token ids as one ``generate`` call per request, and the generator says which ran."""
    reqs = _requests(_items(demo, 8, 4), max_new_tokens=12)
    ref = smollm2.generate_ids(reqs, batched=False)
    smollm2.generator = gen = BatchedGenerator(BatchPolicy())
    assert smollm2.generate_ids(reqs) == ref
    assert gen.describe()["packed_weights_used"] is packed.mkl_ops_available()
    smollm2.generator = off = BatchedGenerator(BatchPolicy(packed_weights=False))
    assert smollm2.generate_ids(reqs) == ref
    assert off.describe()["packed_weights_used"] is False and off.describe()["packed_weights_note"].startswith("off")
    if packed.mkl_ops_available():
        packed._PACKS.pop(smollm2.model, None)
        monkeypatch.setattr(packed, "_check_layout", lambda w, p: "layout differs (simulated)")
        smollm2.generator = refused = BatchedGenerator(BatchPolicy())
        assert smollm2.generate_ids(reqs) == ref
        assert refused.describe()["packed_weights_note"] == "layout differs (simulated)"
        assert not any("forward" in m.__dict__ for m in packed.linears(smollm2.model))
        packed._PACKS.pop(smollm2.model, None)
    smollm2.generator = BatchedGenerator(BatchPolicy())
