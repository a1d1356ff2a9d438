"""Batched greedy generation with the outputs of one-request-at-a-time ``model.generate``.

More: docs/modules.md, ``mmbench_lib/models/batching.py``.
"""
from __future__ import annotations

import gc

import torch

from mmbench_lib.core.requests import GenerateRequest
from mmbench_lib.models.cpu import kv_decode as kv
from mmbench_lib.models.cpu import packed
from mmbench_lib.models.policy import CPU_CHUNK, BatchPolicy, policy_from  # noqa: F401 - the policy lives without torch
from mmbench_lib.scoring import hf_internals as hf
from mmbench_lib.scoring.engine import is_oom

#: inputs that grow with the sequence and how a generated token extends them (``generate``'s own rules)
_TOKEN_TYPE_KEYS = ("token_type_ids", "mm_token_type_ids")


#: prompts per padded prefill forward when ``BatchPolicy.prefill_rows`` is None (tiny LLaVA: 8 rows 0.52 s,
#: 16 rows 0.58 s, 32 rows 0.56 s on the benchmark's image workload: more rows, more padding)
PADDED_PREFILL_ROWS = 8
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


def response_stopped(adapter, tokens: list[int]) -> bool:
    """Whether the response of new ``tokens`` holds one of the adapter's stop strings (none set: False)."""
    settings = getattr(adapter, "settings", None)
    if not settings or not settings.stop_strings or not tokens:
        return False
    return settings.cut(adapter.tokenizer.decode(tokens, skip_special_tokens=True))[1]


class ResponseStops:
    """A ``generate`` stopping criterion: a row is done once its response -- the tokens after the first
    ``prompt_width`` columns, decoded -- holds a stop string. Unlike ``generate(stop_strings=...)`` (whose
    ``StopStringCriteria`` also matches a stop string that begins in the prompt: its "overhang" rule), only
    the response counts, so stopping here gives exactly the text of cutting a longer response afterwards."""

    def __init__(self, adapter, prompt_width: int):
        self.adapter, self.prompt_width = adapter, prompt_width

    def __call__(self, input_ids, scores, **kwargs):
        rows = input_ids[:, self.prompt_width:].tolist()
        return torch.tensor([response_stopped(self.adapter, r) for r in rows], dtype=torch.bool, device=input_ids.device)


def stop_kwargs(adapter, prompt_width: int) -> dict:
    """``generate`` keywords that end rows at the adapter's stop strings (none set: ``{}``)."""
    settings = getattr(adapter, "settings", None)
    if not settings or not settings.stop_strings:
        return {}
    from transformers import StoppingCriteria, StoppingCriteriaList

    crit = type("ResponseStopsCriteria", (ResponseStops, StoppingCriteria), {})(adapter, prompt_width)
    return {"stopping_criteria": StoppingCriteriaList([crit])}


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
                  on_chunk=None, drop_rows=None, adapter=None) -> list[list[int]]:
    """Greedy new tokens of every row of a left-padded batch, each cut at its first stop token.

    With ``chunk`` > 0, ``generate`` runs ``chunk`` steps at a time over a kept cache and the rows
    that finished leave the batch (their cache rows are dropped) before the next chunk;
    ``drop_rows(index)`` selects the same rows of any per-batch state the model keeps itself.
    ``adapter``: a row whose response holds one of its stop strings ends too (:class:`ResponseStops`).
    """
    rows = list(range(inputs["input_ids"].shape[0]))
    new: list[list[int]] = [[] for _ in rows]
    done = [False] * len(rows)
    cache = None
    step_inputs = dict(inputs)
    left = max_new_tokens
    encdec = _is_encoder_decoder(model)
    prompt_width = 1 if encdec else inputs["input_ids"].shape[1]
    while left > 0 and rows:
        k = min(chunk, left) if chunk > 0 else left
        width = 1 if encdec else step_inputs["input_ids"].shape[1]  # encdec: after the start token
        out = model.generate(
            **step_inputs, **hf.cache_kw(model, cache), max_new_tokens=k, do_sample=False, pad_token_id=pad_id,
            return_dict_in_generate=True, use_cache=True, **(stop_kwargs(adapter, prompt_width) if adapter else {}),
        )
        gen = out.sequences[:, width:]
        got = gen.shape[1]
        keep = []
        for j, r in enumerate(rows):
            toks, ended = cut_at_stop(gen[j].tolist(), stops)
            new[r] += toks
            ended = ended or response_stopped(adapter, new[r])
            done[r] = ended
            if not ended:
                keep.append(j)
        left -= got
        if on_chunk is not None:
            on_chunk(len(rows), got)
        if got < k or not keep or left <= 0:
            break  # generate stopped early only when every row finished
        cache = hf.out_cache(out)
        ids = out.sequences
        step_inputs = _grow({k2: v for k2, v in step_inputs.items() if k2 in ("attention_mask", *_TOKEN_TYPE_KEYS)}, got)
        step_inputs["input_ids"] = ids
        if len(keep) < len(rows):
            idx = torch.tensor(keep)  # on the CPU: it indexes cache layers on any device (a dispatched model)
            hf.select_cache_rows(cache, idx)
            if drop_rows is not None:
                drop_rows(idx)
            step_inputs = {k2: v.index_select(0, idx.to(v.device)) for k2, v in step_inputs.items()}
            rows = [rows[j] for j in keep]
    return new


class OneAtATime:
    """The reference generation of every adapter (mixed in by ``hf.DecoderOnlyAdapter`` and
    ``encdec.Blip2EncoderDecoder``): one ``model.generate`` call per request, no padding.

    The adapter provides ``generate_ids`` (its batched path), ``finish``, ``model``, ``reference_inputs(request)``
    and ``reference_kwargs(prompt_width)`` (more ``generate`` keywords)."""

    def generate(self, requests: list[GenerateRequest]):
        """Greedy responses in input order (batched where the adapter can)."""
        return [self.finish(r, t) for r, t in zip(requests, self.generate_ids(requests))]

    def generate_one_at_a_time(self, requests: list[GenerateRequest]):
        return [self.finish(r, t) for r, t in zip(requests, self.generate_ids_one_at_a_time(requests))]

    @torch.inference_mode()
    def generate_ids_one_at_a_time(self, requests: list[GenerateRequest]) -> list[list[int]]:
        """The new token ids of one ``generate`` call per request (an encoder-decoder's after its start token)."""
        out = []
        for r in requests:
            inputs = self.reference_inputs(r)
            width = 1 if _is_encoder_decoder(self.model) else inputs["input_ids"].shape[1]
            gen = self.model.generate(**inputs, max_new_tokens=r.max_new_tokens, do_sample=False,
                                      **self.reference_kwargs(width))
            out.append(gen[0, width:].tolist())
        return out

    def reference_kwargs(self, prompt_width: int) -> dict:
        return {}


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
        self.prefill_rows = None if self.policy.prefill_rows is None else min(self.policy.prefill_rows, self.max_rows)
        # likewise (kv-decode path); None until a run knows whether it prefills end to end
        self.oom_events = 0
        self.batches: list[int] = []  # rows of each (prefill) batch that ran (for tests and the benchmark)
        self.row_steps = 0  # sum over decode chunks of rows x steps: the decode work done
        self.prompt_tokens = 0  # kv-decode path: prompt tokens of the requests ...
        self.prefill_tokens = 0  # ... and the tokens the prefill forwards ran (shared prefixes once, padding included)
        self.decode_widths: list[int] = []  # kv-decode path: rows of each decode step
        self.packed_reason: str | None = "not run yet"  # kv-decode path: why the linears were not packed (None: packed)
        self.flat_reason: str | None = "not run yet"  # kv-decode path: why text prompts were not prefilled end to end

    def run(self, adapter, requests: list[GenerateRequest]) -> list[list[int]]:
        """Each request's new token ids (cut at its first stop token), in input order."""
        self.policy = self.policy.on(adapter.device)  # kv_decode and chunk decided for the model's device
        if self.kv_reason(adapter) is None:
            return self.run_kv(adapter, requests)
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
                            getattr(adapter, "drop_rows", None), adapter)
        return [cut_at_stop(t, stops)[0] for t in new]

    def kv_reason(self, adapter) -> str | None:
        """Why ``adapter``'s requests do not take the kv-decode path (None: they do): the policy, or the
        family (``adapter.kv_decode_reason()``)."""
        wanted = self.policy.on(adapter.device).kv_decode
        if not wanted:
            where = torch.device(adapter.device).type
            return ("off (BatchPolicy.kv_decode=False)" if self.policy.kv_decode is False else
                    f"off on {where} (BatchPolicy.kv_decode=None: the kv-decode path is tested on the CPU only; "
                    f"kv_decode=True turns it on)")
        return getattr(adapter, "kv_decode_reason", lambda: "no kv-decode support")()

    def describe(self) -> dict:
        return {**self.policy.describe(), "oom_events": self.oom_events, "max_rows_now": self.max_rows,
                "packed_weights_used": self.packed_reason is None, "packed_weights_note": self.packed_reason,
                "flat_prefill_used": self.flat_reason is None, "flat_prefill_note": self.flat_reason}

    def paths(self, adapter) -> dict:
        """Whether the kv-decode path packs the linear weights and prefills text end to end, with the reason
        when not: as the last run went, or (before any) as the policy and the model say it will."""
        if self.packed_reason == "not run yet":
            packed_note = (packed.ineligible_reason(adapter.model) if self.policy.packed_weights
                           else "off (BatchPolicy.packed_weights=False)")
            flat_note = self._flat_note(adapter)
        else:
            packed_note, flat_note = self.packed_reason, self.flat_reason
        return {"packed_weights_used": packed_note is None, "packed_weights_note": packed_note,
                "flat_prefill_used": flat_note is None, "flat_prefill_note": flat_note}

    def _flat_note(self, adapter) -> str | None:
        """Why this adapter's prompts are not prefilled end to end (None: they are)."""
        from mmbench_lib.models.cpu.flat_prefill import flat_reason

        if not self.policy.flat_prefill:
            return "off (BatchPolicy.flat_prefill=False)"
        if not hasattr(adapter, "token_ids"):
            return "prompts with images are prefilled as processor batches (padded)"
        return flat_reason(adapter.model)

    # -- the kv-decode path (mmbench_lib.models.cpu.kv_decode)
    def run_kv(self, adapter, requests: list[GenerateRequest]) -> list[list[int]]:
        """Shared prefixes once, prefill batches, one decode batch refilled as rows finish; on the CPU
        in fp32, the linear layers on pre-packed weights (``mmbench_lib.models.cpu.packed``)."""
        self.flat_reason = self._flat_note(adapter)
        if self.prefill_rows is None:
            self.prefill_rows = self.max_rows if self.flat_reason is None else min(PADDED_PREFILL_ROWS, self.max_rows)
        with packed.packed_linears(adapter.model, self.policy.packed_weights) as why:
            self.packed_reason = why
            return self._run_kv(adapter, requests)

    def _run_kv(self, adapter, requests: list[GenerateRequest]) -> list[list[int]]:
        rendered = [adapter.render(r) for r in requests]
        ids = [adapter.token_ids(t, key) if hasattr(adapter, "token_ids") else None for t, _, key in rendered]
        keys = [(key, len(ims)) for _, ims, key in rendered]
        attach = self._radix(keys, ids)
        run = _KvRun(self, adapter, requests, rendered, ids, attach)
        queue = self._plan_prefill(adapter, rendered, keys, ids, attach)
        batch: list[int] = []
        while queue or run.active is not None:
            try:
                while queue and run.rows() + len(queue[0]) <= self.max_rows:
                    batch = queue.pop(0)
                    run.prefill(batch)
                    self.batches.append(len(batch))
                run.join()
                if run.active is not None:
                    run.step()
            except Exception as e:  # noqa: BLE001 - only out-of-memory is retried
                size = len(batch) if run.pending else max(run.rows(), 1)
                if not is_oom(e) or size <= 1:
                    raise
                queue = self._after_oom(run, batch if run.pending else [], queue, size)
        return run.out  # type: ignore[return-value]

    def _radix(self, keys, ids) -> list:
        """Each text row's deepest shared prefix node (``kv_decode.radix``) within its key group."""
        attach: list = [None] * len(keys)
        if not self.policy.share_prefix:
            return attach
        for key in set(keys):
            idx = [i for i, k in enumerate(keys) if k == key and ids[i] is not None]
            for i, node in zip(idx, kv.radix([ids[i] for i in idx], self.policy.forward_tokens)):
                attach[i] = node
        return attach

    def _plan_prefill(self, adapter, rendered, keys, ids, attach) -> list[list[int]]:
        """Prefill batches of one key, longest own part (after its shared prefix) first, within
        ``prefill_rows`` rows and ``prefill_tokens`` and with bounded padding (``kv_decode.pack``)."""
        own = [len(x) - (a.depth if a is not None else 0) if x is not None
               else len(adapter.tokenizer(t, add_special_tokens=False)["input_ids"])
               for x, a, (t, _, _) in zip(ids, attach, rendered)]
        batches: list[list[int]] = []
        for key in sorted(set(keys), key=repr):
            idx = [i for i, k in enumerate(keys) if k == key]
            if self.flat_reason is None and all(ids[i] is not None for i in idx):  # end to end: no padding to bound
                idx.sort(key=lambda i: -own[i])
                batches += [[idx[j] for j in part] for part in
                            kv.flat_batches([own[i] for i in idx], self.prefill_rows, self.policy.prefill_tokens)]
                continue
            batches += [[idx[j] for j in part] for part in
                        kv.pack([own[i] for i in idx], self.prefill_rows, self.policy.prefill_tokens,
                                slack=self.policy.forward_tokens)]
        return batches

    def _after_oom(self, run, batch, queue, size: int) -> list[list[int]]:
        """Halve the batch sizes below the forward that failed (``size`` rows); the unfinished rows
        (and the batch being prefilled) wait again, in their order."""
        back = sorted(set(batch).union(*(s.index for s in [run.active, *run.joining] if s is not None)))
        self.oom_events += 1
        self.max_rows = max(1, min(self.max_rows, (size + 1) // 2))
        self.prefill_rows = max(1, min(self.prefill_rows, self.max_rows))
        run.reset(back)
        free_memory()
        groups: dict = {}  # the rows back, by prefill key (chat flag, image count)
        for i in back:
            groups.setdefault((run.rendered[i][2], len(run.rendered[i][1])), []).append(i)
        k = self.prefill_rows
        return [b[i:i + k] for b in [*groups.values(), *queue] for i in range(0, len(b), k)]  # all within the new size


class _KvRun:
    """The state of one kv-decode run: outputs, the decoding batch, the shared prefix nodes."""

    def __init__(self, gen: BatchedGenerator, adapter, requests, rendered, ids, attach):
        self.gen, self.adapter, self.requests, self.rendered, self.ids = gen, adapter, requests, rendered, ids
        self.attach = attach  # each text row's shared prefix node (kv_decode.Node) or None
        self.stops = adapter.stops()
        self.out: list[list[int] | None] = [None] * len(requests)
        self.new: dict[int, list[int]] = {}
        self.active: kv.Active | None = None
        self.joining: list[kv.Active] = []  # prefilled rows waiting to join ``active``
        self.pending = False  # a prefill batch is under way

    def prefill(self, batch: list[int]) -> None:
        self.pending = True
        a, model, device = self.adapter, self.adapter.model, self.adapter.device
        if self.ids[batch[0]] is not None:
            nodes = [self.attach[i] for i in batch]
            segs = [(n, self.ids[i][n.depth if n is not None else 0:]) for n, i in zip(nodes, batch)]
            if self.gen.flat_reason is None:  # the missing prefixes run in the same forward as the rows
                cache, mask, pos, tok = self._prefill_flat(segs)
            else:
                policy = self.gen.policy
                # this batch's prefixes and every other prefix a waiting row shares: a tree level in one forward
                need = [n for n in nodes if n is not None] + [n for n in self.attach if n is not None and n.users > 0]
                self.gen.prefill_tokens += kv.compute_nodes(model, need, a.pad_id(), device, policy.prefill_tokens,
                                                            self.gen.prefill_rows, slack=policy.forward_tokens)
                cache, mask, pos, tok = kv.prefill_segments(model, segs, a.pad_id(), device)
                self.gen.prefill_tokens += len(batch) * max(len(t) for _, t in segs)
            self.gen.prompt_tokens += sum(len(self.ids[i]) for i in batch)
            for n in nodes:
                kv.release(n)
        else:
            inputs = a.encode_batch([self.rendered[i][0] for i in batch], [self.rendered[i][1] for i in batch],
                                    self.rendered[batch[0]][2])
            cache, mask, pos, tok = kv.prefill_inputs(model, inputs)
            self.gen.prompt_tokens += int(mask.sum())
            self.gen.prefill_tokens += mask.numel()
        limits = [self.requests[i].max_new_tokens for i in batch]
        s = kv.Active(list(batch), cache, mask, pos, tok, limits)
        keep = self._take(s, tok)
        self.pending = False
        if keep:
            self.joining.append(s if len(keep) == len(batch) else kv.select(s, keep))

    def _prefill_flat(self, segs):
        """Cache (left-padded rows), mask, next positions and first tokens of rows given as (shared prefix
        node or None, own tokens), all in one forward end to end (``flat_prefill``) together with the
        prefix nodes not computed yet (parents first); a row's cache is its prefix's then its own."""
        from mmbench_lib.models.cpu import flat_prefill as fp

        model, device = self.adapter.model, self.adapter.device
        missing: list = []  # nodes to compute in this forward, parents before children
        for node, _ in segs:
            path = node.path() if node is not None else []
            for n in path:
                if n.kv is None and all(n is not m for m in missing):
                    missing.append(n)
        missing.sort(key=lambda n: n.depth)
        index = {id(n): j for j, n in enumerate(missing)}

        def sources(node):
            return [index[id(n)] if id(n) in index else n.kv for n in (node.path() if node is not None else [])]

        plan_segs = [fp.Segment(n.tokens[n.start:], sources(n.parent), n.start) for n in missing]
        plan_segs += [fp.Segment(t, sources(n), n.depth if n is not None else 0) for n, t in segs]
        plan, logits = fp.prefill_flat(model, plan_segs, device)
        tok = logits.argmax(-1)
        for j, n in enumerate(missing):
            n.kv = [(k.clone(), v.clone()) for k, v in plan.kv[j]]
        parts = []
        for (node, _), own in zip(segs, plan.kv[len(missing):]):
            prefix = [n.kv for n in (node.path() if node is not None else [])]
            parts.append([(torch.cat([p[li][0] for p in prefix] + [k], 2), torch.cat([p[li][1] for p in prefix] + [v], 2))
                          for li, (k, v) in enumerate(own)])
        self.gen.prefill_tokens += sum(len(s.tokens) for s in plan_segs)
        lengths = [part[0][0].shape[2] for part in parts]
        width = max(lengths)
        cache = kv.buffered_cache(parts, width, 0)
        mask = torch.zeros((len(segs), width), dtype=torch.long, device=device)
        for j, n in enumerate(lengths):
            mask[j, width - n:] = 1
        return cache, mask, torch.tensor(lengths, device=device), tok[len(missing):]

    def rows(self) -> int:
        return sum(len(s.index) for s in ([self.active] if self.active is not None else []) + self.joining)

    def join(self) -> None:
        """The prefilled rows join the decoding batch (all caches copied once into one buffer)."""
        if self.joining:
            self.active = kv.merge(([self.active] if self.active is not None else []) + self.joining)
            self.joining = []

    def step(self) -> None:
        s, tok = kv.step(self.adapter.model, self.active)
        self.gen.row_steps += len(s.index)
        self.gen.decode_widths.append(len(s.index))
        keep = self._take(s, tok)
        self.active = None if not keep else s if len(keep) == len(s.index) else kv.select(s, keep)

    def _take(self, s: kv.Active, tok: torch.Tensor) -> list[int]:
        """Append each row's new token; finished rows go to ``out``; the positions of the rows left."""
        keep = []
        for j, (i, t) in enumerate(zip(s.index, tok.tolist())):
            toks = self.new.setdefault(i, [])
            if len(toks) < s.limit[j]:
                toks.append(t)
            if t in self.stops or len(toks) >= s.limit[j] or response_stopped(self.adapter, toks):
                self.out[i] = toks
            else:
                keep.append(j)
        return keep

    def reset(self, rows: list[int]) -> None:
        """Forget the rows' decoding state (they are prefilled again) after an out-of-memory error."""
        for i in rows:
            self.new.pop(i, None)
            self.out[i] = None
        self.active = None
        self.joining = []
        self.pending = False
