"""Batched greedy generation with the outputs of one-request-at-a-time ``model.generate``.

``generate_batched(adapter, requests)``:

1. plan: requests are grouped by what must be equal inside a batch (chat flag, image count,
   ``max_new_tokens``), sorted longest prompt first (as lm-eval's ``Collator``: out-of-memory
   shows up on the first batch) and cut into batches whose rows x (prompt + new tokens) stay
   within ``BatchPolicy.token_budget``;
2. encode: the adapter's processor batches texts and images itself, left-padded, with masks;
3. decode: ``model.generate`` in chunks of ``BatchPolicy.chunk`` steps over a kept cache; between
   chunks the rows that hit a stop token leave the batch (cache rows dropped), so a one-letter
   answer does not keep costing a full batch while a long one runs to the limit;
4. an out-of-memory error halves the batch and retries (the smaller size is kept), and the
   results go back in input order.

Each row's new tokens are cut at its first stop token, exactly as one ``generate`` call ends.
"""
from __future__ import annotations

import gc
from dataclasses import dataclass

import torch

from mmbench_lib.core.requests import GenerateRequest
from mmbench_lib.scoring.engine import is_oom

#: inputs that grow with the sequence and how a generated token extends them (``generate``'s own rules)
_TOKEN_TYPE_KEYS = ("token_type_ids", "mm_token_type_ids")


@dataclass
class BatchPolicy:
    """How requests become batches (tokens counted as rows x (prompt + max_new_tokens))."""

    token_budget: int = 32768
    max_rows: int = 32
    chunk: int = 4  # decode steps between dropping finished rows; 0: one generate call per batch

    def describe(self) -> dict:
        return {"token_budget": self.token_budget, "max_rows": self.max_rows, "chunk": self.chunk}


def plan_batches(keys: list, lengths: list[int], max_new: list[int], policy: BatchPolicy) -> list[list[int]]:
    """Indices per batch: same key, longest first, within the token budget and row limit."""
    order = sorted(range(len(keys)), key=lambda i: (repr(keys[i]), -lengths[i], i))
    batches: list[list[int]] = []
    for i in order:
        cur = batches[-1] if batches else None
        if cur and keys[cur[0]] == keys[i] and len(cur) < policy.max_rows:
            width = lengths[cur[0]] + max_new[cur[0]]  # the first row is the longest
            if (len(cur) + 1) * width <= policy.token_budget:
                cur.append(i)
                continue
        batches.append([i])
    return batches


def stop_ids(model, tokenizer) -> set[int]:
    """The token ids that end a ``generate`` call: the generation config's EOS ids, else the tokenizer's."""
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    ids = eos if isinstance(eos, (list, tuple)) else [eos]
    return {int(i) for i in ids if i is not None}


def cut_at_stop(tokens: list[int], stops: set[int]) -> tuple[list[int], bool]:
    """Tokens up to and including the first stop token, and whether one was found."""
    for j, t in enumerate(tokens):
        if t in stops:
            return tokens[: j + 1], True
    return tokens, False


def _grow(inputs: dict, n: int) -> dict:
    """Extend the per-token inputs by ``n`` generated tokens as ``generate`` does."""
    out = dict(inputs)
    mask = out["attention_mask"]
    out["attention_mask"] = torch.cat([mask, mask.new_ones(mask.shape[0], n)], dim=-1)
    if out.get("token_type_ids") is not None:
        tt = out["token_type_ids"]
        out["token_type_ids"] = torch.cat([tt, tt[:, -1:].expand(-1, n)], dim=-1)
    if out.get("mm_token_type_ids") is not None:
        tt = out["mm_token_type_ids"]
        out["mm_token_type_ids"] = torch.cat([tt, tt.new_zeros(tt.shape[0], n)], dim=-1)
    return out


def _is_encoder_decoder(model) -> bool:
    cfg = model.config
    return bool(getattr(cfg, "is_encoder_decoder", False) or getattr(cfg.get_text_config(), "is_encoder_decoder", False))


@torch.inference_mode()
def decode_greedy(model, inputs: dict, max_new_tokens: int, stops: set[int], pad_id: int, chunk: int,
                  on_chunk=None, drop_rows=None) -> list[list[int]]:
    """Greedy new tokens of every row of a left-padded batch, each cut at its first stop token.

    With ``chunk`` > 0, ``generate`` runs ``chunk`` steps at a time over a kept cache and the rows
    that finished leave the batch (their cache rows are dropped) before the next chunk;
    ``drop_rows(index)`` selects the same rows of any per-batch state the model keeps itself.
    """
    rows = list(range(inputs["input_ids"].shape[0]))
    new: list[list[int]] = [[] for _ in rows]
    done = [False] * len(rows)
    cache = None
    step_inputs = dict(inputs)
    left = max_new_tokens
    while left > 0 and rows:
        k = min(chunk, left) if chunk > 0 else left
        width = 1 if _is_encoder_decoder(model) else step_inputs["input_ids"].shape[1]  # encdec: after the start token
        out = model.generate(
            **step_inputs, past_key_values=cache, max_new_tokens=k, do_sample=False, pad_token_id=pad_id,
            return_dict_in_generate=True, use_cache=True,
        )
        gen = out.sequences[:, width:]
        got = gen.shape[1]
        keep = []
        for j, r in enumerate(rows):
            toks, ended = cut_at_stop(gen[j].tolist(), stops)
            new[r] += toks
            done[r] = ended
            if not ended:
                keep.append(j)
        left -= got
        if on_chunk is not None:
            on_chunk(len(rows), got)
        if got < k or not keep or left <= 0:
            break  # generate stopped early only when every row finished
        cache = out.past_key_values
        ids = out.sequences
        step_inputs = _grow({k2: v for k2, v in step_inputs.items() if k2 in ("attention_mask", *_TOKEN_TYPE_KEYS)}, got)
        step_inputs["input_ids"] = ids
        if len(keep) < len(rows):
            idx = torch.tensor(keep, device=ids.device)
            cache.batch_select_indices(idx)
            if drop_rows is not None:
                drop_rows(idx)
            step_inputs = {k2: v.index_select(0, idx) for k2, v in step_inputs.items()}
            rows = [rows[j] for j in keep]
    return new


def free_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


class BatchedGenerator:
    """Plans, encodes and decodes batches for a decoder-only adapter; halves a batch on out-of-memory.

    The adapter provides ``render(request) -> (text, images, key)``, ``encode_batch(texts, images, key)``,
    ``stops()``, ``pad_id()``, ``model`` and ``tokenizer``.
    """

    def __init__(self, policy: BatchPolicy | None = None):
        self.policy = policy or BatchPolicy()
        self.max_rows = self.policy.max_rows  # lowered after an out-of-memory error
        self.oom_events = 0
        self.batches: list[int] = []  # rows of each batch that ran (for tests and the benchmark)
        self.row_steps = 0  # sum over decode chunks of rows x steps: the decode work done

    def run(self, adapter, requests: list[GenerateRequest]) -> list[list[int]]:
        """Each request's new token ids (cut at its first stop token), in input order."""
        rendered = [adapter.render(r) for r in requests]
        lengths = [len(adapter.tokenizer(t, add_special_tokens=False)["input_ids"]) for t, _, _ in rendered]
        keys = [(key, len(ims), r.max_new_tokens) for (_, ims, key), r in zip(rendered, requests)]
        policy = BatchPolicy(self.policy.token_budget, self.max_rows, self.policy.chunk)
        out: list[list[int] | None] = [None] * len(requests)
        for batch in plan_batches(keys, lengths, [r.max_new_tokens for r in requests], policy):
            self._run_batch(adapter, requests, rendered, batch, out)
        return out  # type: ignore[return-value]

    def _run_batch(self, adapter, requests, rendered, batch, out) -> None:
        start = 0
        while start < len(batch):
            part = batch[start:start + self.max_rows]
            try:
                toks = self._decode(adapter, requests, rendered, part)
            except Exception as e:  # noqa: BLE001 - only out-of-memory is retried
                if not is_oom(e) or len(part) == 1:
                    raise
                self.oom_events += 1
                self.max_rows = (len(part) + 1) // 2  # halved, rounded up
                free_memory()
                continue
            for i, t in zip(part, toks):
                out[i] = t
            self.batches.append(len(part))
            start += len(part)

    def _decode(self, adapter, requests, rendered, part):
        texts = [rendered[i][0] for i in part]
        images = [rendered[i][1] for i in part]
        inputs = adapter.encode_batch(texts, images, rendered[part[0]][2])
        stops = adapter.stops()
        max_new = requests[part[0]].max_new_tokens

        def count(rows, steps):
            self.row_steps += rows * steps

        chunk = 0 if getattr(adapter, "row_drop_unsupported", None) else self.policy.chunk
        new = decode_greedy(adapter.model, inputs, max_new, stops, adapter.pad_id(), chunk, count,
                            getattr(adapter, "drop_rows", None))
        return [cut_at_stop(t, stops)[0] for t in new]

    def describe(self) -> dict:
        return {**self.policy.describe(), "oom_events": self.oom_events, "max_rows_now": self.max_rows}
