"""How far two computations of the same log-likelihood may differ in floating point.

The reference scorer, the shared-prefix engine and the packed path compute the same
mathematical quantity; they differ only in the order of floating-point sums (batched vs
single rows, cached vs recomputed prefix, different matmul kernels on different CPUs).
Predictions must agree exactly; the log-likelihoods agree within this bound:

    tol(sum) = depth * sqrt(width) * u(dtype) * (n_tokens + |sum log p|)
    tol(mean) = tol(sum) / n_tokens

More: docs/modules.md, ``mmbench_lib/core/numerics.py``.
"""
from __future__ import annotations

import math

#: unit roundoff (half the machine epsilon) by dtype name
UNIT_ROUNDOFF = {"float32": 2.0 ** -24, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float64": 2.0 ** -53}


def dtype_name(dtype) -> str:
    """``torch.float32`` / ``"fp32"`` / ``"float32"`` -> ``"float32"``."""
    name = str(dtype).replace("torch.", "")
    return {"fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16", "float": "float32"}.get(name, name)


def logprob_tolerance(num_tokens: int, value: float, dtype="float32", depth: int = 1, width: int = 1) -> float:
    """Largest expected difference of a summed log-likelihood of ``num_tokens`` tokens (``value``)
    between two orderings of the same computation in ``dtype`` (see the module docstring)."""
    u = UNIT_ROUNDOFF[dtype_name(dtype)]
    magnitude = num_tokens + (abs(value) if math.isfinite(value) else 0.0)
    return depth * math.sqrt(max(width, 1)) * u * max(magnitude, 1.0)


def network_shape(model, seq_len: int = 0) -> tuple[int, int]:
    """``(depth, width)`` of a transformers model for ``logprob_tolerance``: all layers the tokens pass
    through (vision tower, language model, encoder and decoder) and the widest dot product."""
    config = model.config
    parts = [getattr(config, k, None) for k in ("text_config", "vision_config", "qformer_config")]
    parts = [c for c in parts if c is not None] or [config]
    depth, width = 0, seq_len
    for c in parts:
        depth += int(getattr(c, "num_hidden_layers", 0) or getattr(c, "num_layers", 0) or getattr(c, "n_layer", 0) or 0)
        if getattr(c, "is_encoder_decoder", False):
            depth += int(getattr(c, "num_decoder_layers", 0) or 0)
        width = max(width, int(getattr(c, "hidden_size", 0) or getattr(c, "d_model", 0) or getattr(c, "n_embd", 0) or 0))
    return max(depth, 1), max(width, 1)
