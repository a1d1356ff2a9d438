"""The derived floating-point tolerance for log-likelihood agreement (mmbench_lib.core.numerics)."""
import pytest

from mmbench_lib.core.numerics import dtype_name, logprob_tolerance, network_shape


def test_worked_example_smollm2_seven_tokens():
    # 30 layers, width 576, fp32, 7 tokens summing to -20: 30 * 24 * 2^-24 * 27
    tol = logprob_tolerance(7, -20.0, "float32", depth=30, width=576)
    assert tol == pytest.approx(30 * 24 * 2 ** -24 * 27)
    assert 1e-3 < tol < 1.3e-3
    assert tol > 1.17e-4 * 5  # the difference measured across two x86 CPUs sits well inside


def test_grows_with_tokens_magnitude_depth_and_coarser_dtypes():
    base = logprob_tolerance(3, -5.0, "float32", 4, 64)
    assert logprob_tolerance(6, -5.0, "float32", 4, 64) > base
    assert logprob_tolerance(3, -50.0, "float32", 4, 64) > base
    assert logprob_tolerance(3, -5.0, "float32", 8, 64) == pytest.approx(2 * base)
    assert logprob_tolerance(3, -5.0, "float32", 4, 256) == pytest.approx(2 * base)
    assert logprob_tolerance(3, -5.0, "bfloat16", 4, 64) == pytest.approx(2 ** 16 * base)
    assert logprob_tolerance(0, float("-inf"), "float32", 4, 64) > 0  # empty choice: finite


def test_dtype_names():
    torch = pytest.importorskip("torch")
    assert dtype_name(torch.bfloat16) == "bfloat16" and dtype_name("fp16") == "float16" and dtype_name("fp32") == "float32"


def test_network_shape_counts_every_tower():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=3, num_attention_heads=2)
    model = LlamaForCausalLM(cfg)
    assert network_shape(model) == (3, 16) and network_shape(model, seq_len=100) == (3, 100)
    from mmbench_lib.models.tiny import tiny_llava

    llava, _ = tiny_llava(layers=2, hidden=64)
    assert network_shape(llava) == (4, 64)  # vision tower and language model

