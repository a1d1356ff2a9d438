"""Greedy decoding over a kept key/value cache: the fast path of ``BatchedGenerator``.

More: docs/modules.md, ``mmbench_lib/models/cpu/kv_decode.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from mmbench_lib.models.family_records import types_with
from mmbench_lib.scoring import hf_internals as hf
from mmbench_lib.scoring.hf_internals import buffer_layer, cache_tensors, make_cache  # noqa: F401 - used here and by tests

#: model types whose cached forward takes plain 1-D ``position_ids`` and a plain ``DynamicCache`` (family records)
TEXT_TYPES = types_with(kind="text", kv_unsupported=None)
VLM_TYPES = types_with(kind="vision", kv_unsupported=None)

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


def buffered_cache(parts: list[list[tuple[torch.Tensor, torch.Tensor]]], width: int, spare: int):
    """A cache of ``BufferLayer``s holding the row blocks ``parts`` (per block, per layer (keys, values)),
    each right-aligned at ``width`` (left padding zeroed), with ``spare`` free columns."""
    rows = sum(p[0][0].shape[0] for p in parts)
    layers = []
    for li in range(len(parts[0])):
        k0, v0 = parts[0][li]
        kbuf = k0.new_zeros(rows, k0.shape[1], width + spare, k0.shape[3])
        vbuf = v0.new_zeros(rows, v0.shape[1], width + spare, v0.shape[3])
        r = 0
        for p in parts:
            k, v = p[li]
            kbuf[r:r + k.shape[0], :, width - k.shape[2]:width] = k
            vbuf[r:r + v.shape[0], :, width - v.shape[2]:width] = v
            r += k.shape[0]
        layers.append(buffer_layer()(kbuf, vbuf, width))
    return hf.cache_with_layers(layers)


def left_pad(t: torch.Tensor, n: int, dim: int) -> torch.Tensor:
    if n == 0:
        return t
    shape = list(t.shape)
    shape[dim] = n
    return torch.cat([t.new_zeros(shape), t], dim=dim)


def merge(parts: list[Active]) -> Active:
    """One batch from several (each cache copied once into new buffers, left-padded to the widest)."""
    w = max(p.width for p in parts)
    limit = [n for p in parts for n in p.limit]
    cache = buffered_cache([cache_tensors(p.cache) for p in parts], w, max(limit))
    return Active([i for p in parts for i in p.index], cache, torch.cat([left_pad(p.mask, w - p.width, 1) for p in parts]),
                  torch.cat([p.pos for p in parts]), torch.cat([p.last for p in parts]), limit)


def select(s: Active, keep: list[int]) -> Active:
    """The rows ``keep`` of a batch (the others finished), trimming cache columns no row uses."""
    idx = torch.tensor(keep, device=s.mask.device)
    mask = s.mask.index_select(0, idx)
    drop = int((mask.sum(0) == 0).to(torch.int8).cumprod(0).sum())  # leading columns now padding in every row
    limit = [s.limit[j] for j in keep]
    if all(hasattr(layer, "kbuf") for layer in hf.cache_layers(s.cache)):
        cache = _select_buffered(s.cache, idx, drop)
    else:
        data = [(k.index_select(0, idx.to(k.device))[:, :, drop:], v.index_select(0, idx.to(v.device))[:, :, drop:])
                for k, v in cache_tensors(s.cache)]  # a dispatched model's layers may sit on several devices
        cache = buffered_cache([data], s.width - drop, max(limit))
    return Active([s.index[j] for j in keep], cache, mask[:, drop:], s.pos.index_select(0, idx),
                  s.last.index_select(0, idx), limit)


def _select_buffered(cache, idx: torch.Tensor, drop: int):
    """The rows ``idx`` of a cache of ``BufferLayer``s, one copy per buffer (spare columns kept), the
    first ``drop`` columns left out of the view."""
    return hf.cache_with_layers(
        [buffer_layer()(layer.kbuf.index_select(0, idx.to(layer.kbuf.device))[:, :, drop:],
                        layer.vbuf.index_select(0, idx.to(layer.vbuf.device))[:, :, drop:], layer.n - drop)
         for layer in hf.cache_layers(cache)])  # a dispatched model's layers may sit on several devices


def _argmax_last(logits: torch.Tensor) -> torch.Tensor:
    return logits[:, -1, :].argmax(-1)


@dataclass(eq=False)
class Node:
    """A prompt prefix shared by several rows (a node of the radix tree), computed once."""

    depth: int  # prefix length in tokens
    parent: "Node | None"
    tokens: list[int]  # the prefix (the first ``depth`` tokens of each row below)
    users: int  # rows below it not prefilled yet; its cache is freed at 0
    kv: list | None = None  # per layer (keys, values) of its own tokens (start..depth), batch 1

    @property
    def start(self) -> int:
        return self.parent.depth if self.parent is not None else 0

    def path(self) -> list["Node"]:
        """The nodes from the root down to this one."""
        out, n = [], self
        while n is not None:
            out.append(n)
            n = n.parent
        return out[::-1]


def radix(rows: list[list[int]], min_saving: int = 16) -> list[Node | None]:
    """The deepest shared prefix node of each row (None: no shared prefix), from a radix tree of the
    rows in which a node exists where its computation saves >= ``min_saving`` prompt tokens
    ((rows below - 1) x its own tokens); every row keeps at least its last token to itself."""
    attach: list[Node | None] = [None] * len(rows)

    def build(idx: list[int], parent: Node | None) -> None:
        p = shared_prefix([rows[i] for i in idx])
        start = parent.depth if parent is not None else 0
        if p > start and (len(idx) - 1) * (p - start) >= min_saving:
            parent = Node(p, parent, rows[idx[0]][:p], len(idx))
        groups: dict = {}
        for i in idx:
            groups.setdefault(rows[i][p] if len(rows[i]) - 1 > p else None, []).append(i)
        for tok, g in groups.items():
            if tok is None or len(g) == 1:
                for i in g:
                    attach[i] = parent
            else:
                build(g, parent)

    if len(rows) > 1:
        build(list(range(len(rows))), None)
    return attach


def pack(lengths: list[int], max_rows: int, max_tokens: int, waste: float = 0.25, slack: int = 0) -> list[list[int]]:
    """Batches of indices, longest first: within ``max_rows`` rows and ``max_tokens`` (rows x longest),
    a row joining only while its padding is bounded: it is at least (1 - ``waste``) of the batch's
    longest, or at most ``slack`` tokens shorter (padding cheaper than another forward)."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    out: list[list[int]] = []
    for i in order:
        cur = out[-1] if out else None
        if (cur and len(cur) < max_rows and (len(cur) + 1) * lengths[cur[0]] <= max_tokens
                and (lengths[i] >= (1 - waste) * lengths[cur[0]] or lengths[cur[0]] - lengths[i] <= slack)):
            cur.append(i)
        else:
            out.append([i])
    return out


def _path_kv(node: Node | None, layer: int):
    if node is None:
        return None
    parts = [n.kv[layer] for n in node.path()]
    if len(parts) == 1:
        return parts[0]
    return torch.cat([k for k, _ in parts], dim=2), torch.cat([v for _, v in parts], dim=2)


def _segments_batch(segs, pad_id: int, device, n_layers: int):
    """Inputs of a batch of (prefix node or None, own tokens) rows: each prefix's cache left-padded to
    the widest, the own tokens left-padded after it, explicit positions, the mask of real columns."""
    d = max(n.depth if n is not None else 0 for n, _ in segs)
    w = max(len(t) for _, t in segs)
    b = len(segs)
    x = torch.full((b, w), pad_id, dtype=torch.long)
    mask = torch.zeros((b, d + w), dtype=torch.long)
    pos = torch.ones((b, w), dtype=torch.long)
    for j, (node, toks) in enumerate(segs):
        dj, n = (node.depth if node is not None else 0), len(toks)
        x[j, w - n:] = torch.tensor(toks)
        mask[j, d - dj:d] = 1
        mask[j, d + w - n:] = 1
        pos[j, w - n:] = torch.arange(dj, dj + n)
    cache = None
    if d:
        layers = []
        for li in range(n_layers):
            kvs = [_path_kv(node, li) for node, _ in segs]
            ref = next(k for k in kvs if k is not None)[0]
            empty = ref.new_zeros(1, ref.shape[1], 0, ref.shape[3])
            kvs = [k if k is not None else (empty, empty) for k in kvs]
            layers.append((torch.cat([left_pad(k, d - k.shape[2], 2) for k, _ in kvs]),
                           torch.cat([left_pad(v, d - v.shape[2], 2) for _, v in kvs])))
        cache = make_cache(layers)
    return x.to(device), mask.to(device), pos.to(device), cache


def _n_layers(model) -> int:
    return model.config.get_text_config(decoder=True).num_hidden_layers


@torch.inference_mode()
def prefill_segments(model, segs, pad_id: int, device):
    """Cache, mask, next positions and first greedy tokens of rows given as (shared prefix node or
    None, the row's own tokens after it); the nodes' caches must be computed."""
    x, mask, pos, cache = _segments_batch(segs, pad_id, device, _n_layers(model))
    out = model(input_ids=x, attention_mask=mask, position_ids=pos, **hf.cache_kw(model, cache), use_cache=True,
                logits_to_keep=1)
    nxt = pos[:, -1] + 1
    return hf.out_cache(out), mask, nxt, _argmax_last(out.logits)


def flat_batches(lengths: list[int], max_rows: int, max_tokens: int) -> list[list[int]]:
    """Consecutive indices per flat forward: within ``max_rows`` segments and ``max_tokens`` tokens."""
    out: list[list[int]] = []
    total = 0
    for i, n in enumerate(lengths):
        if out and len(out[-1]) < max_rows and total + n <= max_tokens:
            out[-1].append(i)
            total += n
        else:
            out.append([i])
            total = n
    return out


@torch.inference_mode()
def compute_nodes(model, nodes: list[Node], pad_id: int, device, max_tokens: int, max_rows: int,
                  slack: int = 0) -> int:
    """Compute the caches of ``nodes`` and their missing ancestors, parents first, the nodes of a
    round packed into batches (``pack``); returns the tokens run (padding included)."""
    missing, seen = [], set()
    for n in nodes:
        while n is not None and n.kv is None and id(n) not in seen:
            seen.add(id(n))
            missing.append(n)
            n = n.parent
    ran = 0
    while missing:
        ready = [n for n in missing if n.parent is None or n.parent.kv is not None]
        for part in pack([n.depth - n.start for n in ready], max_rows, max_tokens, slack=slack):
            batch = [ready[j] for j in part]
            cache, mask, _, _ = prefill_segments(model, [(n.parent, n.tokens[n.start:]) for n in batch], pad_id, device)
            ran += len(batch) * (batch[0].depth - batch[0].start)
            for j, n in enumerate(batch):
                own = n.depth - n.start
                n.kv = [(k[j:j + 1, :, -own:].clone(), v[j:j + 1, :, -own:].clone()) for k, v in cache_tensors(cache)]
        missing = [n for n in missing if n.kv is None]
    return ran


def release(node: Node | None) -> None:
    """A row below ``node`` was prefilled: free the caches no waiting row needs."""
    while node is not None:
        node.users -= 1
        if node.users <= 0:
            node.kv = None
        node = node.parent


def shift_rows(t: torch.Tensor, shifts: list[int], dim: int) -> torch.Tensor:
    """Each row ``j`` of ``t`` rolled by ``shifts[j]`` along ``dim`` (positive: to the right)."""
    if not any(shifts):
        return t
    return torch.stack([row.roll(s, dims=dim - 1) if s else row for row, s in zip(t, shifts)])


@torch.inference_mode()
def prefill_inputs(model, inputs: dict):
    """Cache, mask, next positions and first greedy tokens of a left-padded processor batch.

    The forward runs with the padding moved to the right end of each row, so plain causal attention
    is exact without a padding mask (the fast causal kernel, as for one request alone); the cache is
    then shifted back to the left-padded layout of the decode batch (padding columns zeroed)."""
    mask = inputs["attention_mask"].long()
    n = mask.sum(-1)
    pad = (mask.shape[1] - n).tolist()
    rows = {k: shift_rows(v, [-p for p in pad], 1) for k, v in inputs.items()
            if isinstance(v, torch.Tensor) and v.dim() >= 2 and v.shape[:2] == mask.shape and k != "attention_mask"}
    pos = torch.arange(mask.shape[1], device=mask.device).expand_as(mask)
    last = sorted(set((n - 1).tolist()))
    keep = torch.tensor(last, device=mask.device)
    others = {k: v for k, v in inputs.items() if k not in rows and k != "attention_mask"}
    out = model(**others, **rows, position_ids=pos, use_cache=True, logits_to_keep=keep)
    pick = torch.tensor([last.index(int(i)) for i in n - 1], device=mask.device)
    tok = out.logits[torch.arange(len(pick), device=mask.device), pick].argmax(-1)
    left = [(shift_rows(k, pad, 2), shift_rows(v, pad, 2)) for k, v in cache_tensors(hf.out_cache(out))]
    if any(pad):
        blank = (mask == 0)[:, None, :, None]
        left = [(k.masked_fill(blank, 0), v.masked_fill(blank, 0)) for k, v in left]
    return make_cache(left), mask, n, tok


@torch.inference_mode()
def step(model, s: Active) -> tuple[Active, torch.Tensor]:
    """One greedy step of every row: the batch (cache grown by one column) and the new tokens."""
    mask = torch.cat([s.mask, s.mask.new_ones(s.mask.shape[0], 1)], dim=1)
    out = model(input_ids=s.last[:, None], attention_mask=mask, position_ids=s.pos[:, None],
                **hf.cache_kw(model, s.cache), use_cache=True, logits_to_keep=1)
    tok = _argmax_last(out.logits)
    return Active(s.index, hf.out_cache(out), mask, s.pos + 1, tok, s.limit), tok
