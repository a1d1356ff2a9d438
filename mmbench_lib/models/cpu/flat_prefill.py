"""Prefill of many prompt segments in one forward without padding (text decoder-only families).

More: docs/modules.md, ``mmbench_lib/models/cpu/flat_prefill.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from mmbench_lib.models.family_records import types_with
from mmbench_lib.scoring import hf_internals as hf

NAME = "mmbench_flat_prefill"
#: families whose decoder layers pass the forward's keyword arguments on to the attention function
#: (tested on tiny random-weight models of each; family records); StableLM's layer drops them
FLAT_TYPES = types_with(kind="text", flat_unsupported=None)


@dataclass
class Segment:
    """``tokens`` at positions ``prefix_len ..`` after a prefix made of ``sources`` in order, each either a
    computed cache (per layer (keys, values), batch 1) or the index of an earlier segment of the same
    forward, whose keys and values at each layer are taken as that layer computes them: a shared prefix
    and the rows below it can run in one forward."""

    tokens: list[int]
    sources: list = field(default_factory=list)
    prefix_len: int = 0


@dataclass
class FlatPlan:
    """The segments of one forward and, after it, each segment's own keys and values per layer."""

    segments: list[Segment]
    kv: list[list] = field(default_factory=list)  # [segment][layer] -> (keys, values) [1, Hkv, n, D]
    spans: list[tuple[int, int]] = field(default_factory=list)  # each segment's (start, end) in the forward
    masks: list = field(default_factory=list)  # each segment's causal mask over (prefix, own tokens), or None

    def __post_init__(self):
        s = 0
        for seg in self.segments:
            self.spans.append((s, s + len(seg.tokens)))
            s += len(seg.tokens)

    def build_masks(self, device) -> None:
        """Once per forward (every layer uses them): a segment after a prefix of d tokens attends to the
        prefix and causally to itself; one without a prefix takes SDPA's causal kernel (no mask)."""
        self.masks = [torch.ones(len(seg.tokens), seg.prefix_len + len(seg.tokens), dtype=torch.bool,
                                 device=device).tril(seg.prefix_len)[None, None] if seg.sources else None
                      for seg in self.segments]


def flat_reason(model) -> str | None:
    """Why this model's prefill cannot run flat (None: it can)."""
    mt = getattr(model.config, "model_type", "")
    if mt not in FLAT_TYPES:
        return f"model type {mt!r} is not among the families tested end to end {sorted(FLAT_TYPES)}"
    impl = hf.attn_implementation(model)
    if impl != "sdpa":
        return f"attention implementation {impl!r} (flat prefill follows sdpa)"
    return None


def _attention(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None, flat_plan=None,
               **kwargs):
    """Per segment: the model's SDPA attention over (prefix, own tokens); queries [1, H, T, D]."""
    if flat_plan is None:
        raise RuntimeError(f"{type(module).__name__} did not pass the forward's arguments to its attention function; "
                           "this family cannot prefill end to end (BatchPolicy(flat_prefill=False))")
    plan: FlatPlan = flat_plan
    layer = module.layer_idx
    outs = []
    for j, (seg, (s, e), mask) in enumerate(zip(plan.segments, plan.spans, plan.masks)):
        q, k, v = query[:, :, s:e], key[:, :, s:e], value[:, :, s:e]
        plan.kv[j][layer] = (k, v)
        if seg.sources:
            parts = [plan.kv[src][layer] if isinstance(src, int) else src[layer] for src in seg.sources] + [(k, v)]
            k, v = torch.cat([p[0] for p in parts], dim=2), torch.cat([p[1] for p in parts], dim=2)
            if k.shape[2] != mask.shape[-1]:
                raise ValueError(f"segment {j}: prefix_len {seg.prefix_len} but its sources hold "
                                 f"{k.shape[2] - (e - s)} tokens")
        out, _ = hf.sdpa_attention(module, q, k, v, mask, dropout=dropout, scaling=scaling)
        outs.append(out)
    return torch.cat(outs, dim=1), None


def _implementation(model):
    hf.register_attention(NAME, _attention)
    return hf.attention_implementation(model, NAME)


@torch.inference_mode()
def prefill_flat(model, segments: list[Segment], device) -> tuple[FlatPlan, torch.Tensor]:
    """One forward over all segments laid end to end; returns the plan with each segment's keys and
    values per layer, and the logits at each segment's last token ([segments, vocab])."""
    n_layers = model.config.get_text_config(decoder=True).num_hidden_layers
    plan = FlatPlan(segments, [[None] * n_layers for _ in segments])
    ids = torch.tensor([t for seg in segments for t in seg.tokens], dtype=torch.long, device=device)[None]
    pos = torch.cat([torch.arange(seg.prefix_len, seg.prefix_len + len(seg.tokens)) for seg in segments])[None]
    plan.build_masks(device)
    last = torch.tensor([e - 1 for _, e in plan.spans], device=device)
    with _implementation(model):
        out = model(input_ids=ids, position_ids=pos.to(device), use_cache=False, logits_to_keep=last,
                    flat_plan=plan)
    return plan, out.logits[0]
