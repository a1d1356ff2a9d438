"""Greedy decoding over a kept key/value cache: the fast path of ``BatchedGenerator``.

For decoder-only families whose positions are plain (text LMs, LLaVA-1.5 / NeXT / OneVision,
Idefics3), generation runs without ``model.generate``, one forward per step, and gives the token
ids of one ``generate`` call per request:

1. **shared prefix** (text prompts): the longest token prefix common to a group's prompts (the chat
   template's system turn, shared instructions) runs once, and every row reuses its cache;
2. **prefill**: the rest of each prompt in length-sorted batches of ``BatchPolicy.prefill_rows`` rows,
   left-padded after the shared prefix, every token at the position it has alone (explicit
   ``position_ids``); the images of a batch go through the processor and the vision tower together;
3. **decode**: one batch of up to ``max_rows`` rows, filled from all prefill batches (caches
   left-padded to one width), the greedy token being the argmax of the last logits (``greedy_reason``
   checks that ``generate`` would add nothing to it); a row leaves the batch at the step it stops,
   and waiting prompts are prefilled and join the running batch (continuous batching).

An out-of-memory error puts the unfinished rows back in the queue with half the batch sizes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

#: model types whose cached forward takes plain 1-D ``position_ids`` and a plain ``DynamicCache``
TEXT_TYPES = frozenset({"llama", "mistral", "qwen2", "qwen3", "phi3", "olmo", "olmo2", "granite", "stablelm", "gemma"})
VLM_TYPES = frozenset({"llava", "llava_next", "llava_onevision", "idefics3"})

#: generation-config fields that, when set, make ``generate``'s greedy step more than an argmax
_PROCESSOR_FIELDS = {"repetition_penalty": 1.0, "no_repeat_ngram_size": 0, "encoder_no_repeat_ngram_size": 0,
                     "bad_words_ids": None, "min_length": 0, "min_new_tokens": None, "forced_bos_token_id": None,
                     "forced_eos_token_id": None, "suppress_tokens": None, "begin_suppress_tokens": None,
                     "sequence_bias": None, "exponential_decay_length_penalty": None, "renormalize_logits": False,
                     "diversity_penalty": 0.0, "watermarking_config": None}


def greedy_reason(model) -> str | None:
    """Why ``generate(do_sample=False)`` could differ from the argmax of the logits (None: it cannot)."""
    cfg = getattr(model, "generation_config", None)
    for name, neutral in _PROCESSOR_FIELDS.items():
        value = getattr(cfg, name, neutral) if cfg is not None else neutral
        if value not in (neutral, None) and not (name == "renormalize_logits" and value is False):
            return f"generation_config.{name}={value!r} changes the greedy step"
    return None


def kv_decode_reason(model, vlm: bool) -> str | None:
    """Why the fast path cannot run this model (None: it can)."""
    cfg = model.config
    mt = getattr(cfg, "model_type", "")
    allowed = VLM_TYPES if vlm else TEXT_TYPES
    if mt not in allowed:
        return f"model type {mt!r} is not among the plain-position families {sorted(allowed)}"
    text = cfg.get_text_config(decoder=True)
    if getattr(text, "sliding_window", None) and getattr(text, "use_sliding_window", True) is not False:
        return "sliding-window attention needs the model's own cache"
    return greedy_reason(model)


def shared_prefix(rows: list[list[int]], stop_at: int | None = None) -> int:
    """Length of the token prefix common to all rows, leaving each row at least one token of its own
    (and ending before the first ``stop_at`` token: image placeholders get per-row features)."""
    if len(rows) < 2:
        return 0
    n = min(len(r) for r in rows) - 1
    first = rows[0]
    p = 0
    while p < n and all(r[p] == first[p] for r in rows) and first[p] != stop_at:
        p += 1
    return p


@dataclass
class Active:
    """The decoding batch: one row per request, caches left-padded to one width."""

    index: list[int]  # request index of each row
    cache: object  # a DynamicCache with batch len(index)
    mask: torch.Tensor  # [B, width] 1 where a cached position is real
    pos: torch.Tensor  # [B] the position of the token to feed next
    last: torch.Tensor  # [B] the token to feed next (the last one generated)
    limit: list[int] = field(default_factory=list)  # max_new_tokens of each row

    @property
    def width(self) -> int:
        return self.mask.shape[1]


def cache_tensors(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(layer.keys, layer.values) for layer in cache.layers]


def make_cache(data):
    from transformers import DynamicCache

    return DynamicCache(list(data))


def left_pad(t: torch.Tensor, n: int, dim: int) -> torch.Tensor:
    if n == 0:
        return t
    shape = list(t.shape)
    shape[dim] = n
    return torch.cat([t.new_zeros(shape), t], dim=dim)


def merge(a: Active | None, b: Active) -> Active:
    """One batch from two: the narrower caches left-padded (masked) to the wider width."""
    if a is None:
        return b
    w = max(a.width, b.width)
    pa, pb = w - a.width, w - b.width
    data = [(torch.cat([left_pad(ka, pa, 2), left_pad(kb, pb, 2)]), torch.cat([left_pad(va, pa, 2), left_pad(vb, pb, 2)]))
            for (ka, va), (kb, vb) in zip(cache_tensors(a.cache), cache_tensors(b.cache))]
    return Active(a.index + b.index, make_cache(data), torch.cat([left_pad(a.mask, pa, 1), left_pad(b.mask, pb, 1)]),
                  torch.cat([a.pos, b.pos]), torch.cat([a.last, b.last]), a.limit + b.limit)


def select(s: Active, keep: list[int]) -> Active:
    """The rows ``keep`` of a batch (the others finished), trimming cache columns no row uses."""
    idx = torch.tensor(keep, device=s.mask.device)
    mask = s.mask.index_select(0, idx)
    drop = int((mask.sum(0) == 0).to(torch.int8).cumprod(0).sum())  # leading columns now padding in every row
    data = [(k.index_select(0, idx)[:, :, drop:], v.index_select(0, idx)[:, :, drop:]) for k, v in cache_tensors(s.cache)]
    return Active([s.index[j] for j in keep], make_cache(data), mask[:, drop:], s.pos.index_select(0, idx),
                  s.last.index_select(0, idx), [s.limit[j] for j in keep])


def _argmax_last(logits: torch.Tensor) -> torch.Tensor:
    return logits[:, -1, :].argmax(-1)


@torch.inference_mode()
def prefix_cache(model, ids: list[int], device):
    """The cache of a shared prefix (batch 1)."""
    out = model(input_ids=torch.tensor([ids], device=device), use_cache=True, logits_to_keep=1)
    return cache_tensors(out.past_key_values)


@torch.inference_mode()
def prefill_text(model, rows: list[list[int]], prefix: list[int], prefix_kv, pad_id: int, device):
    """Cache, mask, next positions and first greedy tokens of token rows that all start with ``prefix``
    (whose cache is ``prefix_kv``), each suffix left-padded after the prefix."""
    p, b = len(prefix), len(rows)
    w = max(len(r) for r in rows) - p
    x = torch.full((b, w), pad_id, dtype=torch.long)
    mask = torch.zeros((b, p + w), dtype=torch.long)
    mask[:, :p] = 1
    pos = torch.ones((b, w), dtype=torch.long)
    for j, r in enumerate(rows):
        n = len(r) - p
        x[j, w - n:] = torch.tensor(r[p:])
        mask[j, p + w - n:] = 1
        pos[j, w - n:] = torch.arange(p, p + n)
    x, mask, pos = x.to(device), mask.to(device), pos.to(device)
    cache = make_cache((k.expand(b, -1, -1, -1), v.expand(b, -1, -1, -1)) for k, v in prefix_kv) if p else None
    out = model(input_ids=x, attention_mask=mask, position_ids=pos, past_key_values=cache, use_cache=True,
                logits_to_keep=1)
    nxt = torch.tensor([len(r) for r in rows], device=device)
    return out.past_key_values, mask, nxt, _argmax_last(out.logits)


@torch.inference_mode()
def prefill_inputs(model, inputs: dict):
    """Cache, mask, next positions and first greedy tokens of a left-padded processor batch."""
    mask = inputs["attention_mask"].long()
    pos = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
    out = model(**inputs, position_ids=pos, use_cache=True, logits_to_keep=1)
    return out.past_key_values, mask, mask.sum(-1), _argmax_last(out.logits)


@torch.inference_mode()
def step(model, s: Active) -> tuple[Active, torch.Tensor]:
    """One greedy step of every row: the batch (cache grown by one column) and the new tokens."""
    mask = torch.cat([s.mask, s.mask.new_ones(s.mask.shape[0], 1)], dim=1)
    out = model(input_ids=s.last[:, None], attention_mask=mask, position_ids=s.pos[:, None], past_key_values=s.cache,
                use_cache=True, logits_to_keep=1)
    tok = _argmax_last(out.logits)
    return Active(s.index, out.past_key_values, mask, s.pos + 1, tok, s.limit), tok
