"""A likelihood engine that reads each question and image once.

More: docs/modules.md, ``mmbench_lib/scoring/engine.py``.
"""
from __future__ import annotations

import copy
import gc
import inspect
import warnings

import torch

from mmbench_lib.core.requests import ChoiceScore
from mmbench_lib.scoring import hf_internals as hf
from mmbench_lib.scoring.devices import input_device, to_device
from mmbench_lib.scoring.reference import Prepared, ReferenceScorer, choice_scores

_TOKEN_KEYS = ("input_ids", "attention_mask")


def is_oom(exc: BaseException) -> bool:
    """CUDA (or any accelerator) out-of-memory, whichever way torch reports it."""
    if isinstance(exc, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def _free_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _text_config(model):
    cfg = getattr(model, "config", None)
    if cfg is None:
        return None
    try:
        return cfg.get_text_config(decoder=True)
    except Exception:  # noqa: BLE001 - old or custom configs
        return cfg


def _select_rows(cache, idx: torch.Tensor):
    """A new cache holding rows ``idx`` of ``cache`` (repeats allowed); ``cache`` is left as is."""
    if hf.plain_layers(cache):
        data = []
        for keys, values in map(hf.layer_kv, hf.cache_layers(cache)):
            if keys is None:
                data.append((None, None))
            else:
                i = idx.to(keys.device)
                data.append((keys.index_select(0, i), values.index_select(0, i)))
        return hf.make_cache(data)
    new = copy.deepcopy(cache)
    hf.select_cache_rows(new, idx)
    return new


def _stack_left_padded(caches, lengths, width):
    """Stack batch-1 plain caches into one, each left-padded with zeros to ``width`` positions."""
    data = []
    for layers in zip(*(hf.cache_layers(c) for c in caches)):
        kvs = [hf.layer_kv(layer) for layer in layers]
        if any(k is None for k, _ in kvs):
            data.append((None, None))
            continue
        ks, vs = [], []
        for (k, v), n in zip(kvs, lengths):
            pad = (0, 0, width - n, 0)
            ks.append(torch.nn.functional.pad(k, pad))
            vs.append(torch.nn.functional.pad(v, pad))
        data.append((torch.cat(ks, 0), torch.cat(vs, 0)))
    return hf.make_cache(data)


class _Prefixes:
    """The prefix pass of a group: cache, last logits, padded mask and per-row offsets."""

    def __init__(self, cache, last_logits, mask, lengths, mixed, deltas=None):
        self.cache = cache  # batch B, Ppad cached positions (left padding)
        self.last_logits = last_logits  # (B, V)
        self.mask = mask  # (B, Ppad) attention mask of the cached positions
        self.lengths = lengths  # real prefix lengths P_i
        self.mixed = mixed  # several questions: explicit position_ids needed
        self.deltas = deltas  # M-RoPE: per question, position of a text token minus its index (else None)


class SharedPrefixScorer:
    """Same results as ``ReferenceScorer``: one prefix pass and one batched choice pass per question.

    ``token_budget`` bounds the padded tokens of one group (prefix tokens + cached tokens copied
    per choice row + choice tokens); ``None`` picks 8192 on the CPU and a value from free memory
    on CUDA. ``max_questions`` caps a group; it is halved for good after an out-of-memory error.
    """

    name = "shared-prefix"

    def __init__(self, token_budget: int | None = None, max_questions: int = 64, packing: bool = True,
                 pack_tokens: int | None = None, tree: bool = True):
        self.token_budget = token_budget
        self.max_questions = max(1, int(max_questions))
        self.max_rows: int | None = None  # rows per choice pass, set only after an OOM on one question
        self.oom_events = 0
        self.packing = packing
        self.pack_tokens = pack_tokens
        self._pack_checked: dict[int, bool] = {}  # id(model) -> packed path agreed with the cached one
        self.tree = tree
        self._tree_checked: dict[int, bool] = {}  # id(model) -> tree choice pass agreed with the row pass

    #: padded token slots of a typical question (prefix twice, its choices once: ``_cost``): LLaVA-1.5, ~1,300
    QUESTION_SLOTS = 1024

    # ------------------------------------------------------------------ public API
    def questions_per_call(self, model, requested: int) -> int:
        """Questions to hand ``score_many`` at once: on CUDA as many as the token budget (sized from free
        memory) holds at ``QUESTION_SLOTS`` each, between ``requested`` and ``max_questions``; elsewhere
        ``requested``. Groups inside a call still follow the budget, and an out-of-memory error halves them."""
        if _device_type(model) != "cuda":
            return requested
        budget = self.token_budget or self._default_budget(model)
        return max(requested, min(self.max_questions, budget // self.QUESTION_SLOTS))

    def describe(self, model) -> dict:
        """What the engine runs with on this model (the run's manifest records it)."""
        return {"token_budget": self.token_budget or self._default_budget(model),
                "token_budget_source": "set" if self.token_budget else
                ("free GPU memory" if _device_type(model) == "cuda" else "CPU default (8192)"),
                "max_questions": self.max_questions, "packing": self.packing, "tree": self.tree,
                "attn_implementation": hf.attn_implementation(model)}

    def score(self, model, prepared: Prepared) -> list[ChoiceScore]:
        return self.score_many(model, [prepared])[0]

    @torch.inference_mode()
    def score_many(self, model, prepared_list: list[Prepared]) -> list[list[ChoiceScore]]:
        n = len(prepared_list)
        results: list = [None] * n
        if not n:
            return results
        mixable = self._mixable(model)
        todo = list(range(n))
        if mixable and self._can_pack(model):
            packable = [i for i, ok in zip(todo, _packable_all([prepared_list[i] for i in todo])) if ok]
            for i, s in zip(packable, self._score_packed(model, [prepared_list[i] for i in packable])):
                results[i] = s
            todo = [i for i in todo if results[i] is None]
        budget = self.token_budget or self._default_budget(model)
        costs = {i: self._cost([prepared_list[i]]) for i in todo}
        # longest first (OOM shows up at once, similar lengths end up together), stable on ties
        order = sorted(todo, key=lambda i: (-costs[i], i))
        n = len(order)
        pos = 0
        while pos < n:
            size = self._group_size(prepared_list, order, pos, budget, model) if mixable else 1
            chunk = order[pos:pos + size]
            group = [prepared_list[i] for i in chunk]
            out, oom = None, False
            try:
                out = self._score_group(model, group, self.max_rows if size == 1 else None)
            except Exception as e:  # noqa: BLE001
                if not is_oom(e):
                    raise
                oom = True
            if oom:  # retried outside the handler, so the traceback's tensors are freed first
                self.oom_events += 1
                _free_memory()
                if size > 1:
                    self.max_questions = max(1, size // 2)
                    continue
                rows = sum(1 for c in group[0].continuations if len(c) > 1)
                current = min(self.max_rows or rows, rows)
                if current > 1:
                    self.max_rows = max(1, current // 2)
                    continue
                out = [ReferenceScorer().score(model, group[0])]
            for i, s in zip(chunk, out):
                results[i] = s
            pos += size
        return results

    # ------------------------------------------------------------------ planning
    @staticmethod
    def _mixable(model) -> bool:
        """Questions of different prefix lengths can share a forward: 1-D rotary positions, full attention."""
        cfg = _text_config(model)
        if cfg is None:
            return False
        if _is_mrope(model) and _rope_owner(model) is None:
            return False  # multimodal rotary positions whose offsets we cannot read back
        rope = getattr(cfg, "rope_parameters", None) or getattr(cfg, "rope_scaling", None) or {}
        if "mrope" in repr(rope) and _rope_owner(model) is None:
            return False
        types = getattr(cfg, "layer_types", None)
        if types is not None:
            return all(t == "full_attention" for t in types)
        return getattr(cfg, "sliding_window", None) is None or not getattr(cfg, "use_sliding_window", True)

    @staticmethod
    def _cost(group: list[Prepared], tree: bool = False) -> int:
        """Padded token slots of a group: prefixes, then either one tree row per question (cache +
        its choices end to end) or the cache copied per choice row plus the choice tokens."""
        p_pad = max(p.inputs["input_ids"].shape[1] for p in group)
        if tree:
            w_pad = max(sum(max(len(c) - 1, 0) for c in p.continuations) for p in group)
            return len(group) * (2 * p_pad + w_pad)
        rows = [len(c) - 1 for p in group for c in p.continuations if len(c) > 1]
        l_pad = max(rows, default=0)
        return len(group) * p_pad + len(rows) * (p_pad + l_pad)

    def _group_size(self, prepared_list, order, pos, budget, model=None) -> int:
        tree = self.tree and model is not None and self._tree_checked.get(id(model)) is True
        size = 1
        while pos + size < len(order) and size < self.max_questions:
            group = [prepared_list[i] for i in order[pos:pos + size + 1]]
            if self._cost(group, tree) > budget:
                break
            size += 1
        return size

    @staticmethod
    def _default_budget(model) -> int:
        try:
            param = next(model.parameters())
        except (AttributeError, StopIteration):
            return 8192
        if param.device.type != "cuda":
            return 8192
        cfg = _text_config(model)
        hidden = getattr(cfg, "hidden_size", 4096)
        heads = getattr(cfg, "num_attention_heads", 32)
        kv_heads = getattr(cfg, "num_key_value_heads", None) or heads
        head_dim = getattr(cfg, "head_dim", None) or hidden // heads
        layers = getattr(cfg, "num_hidden_layers", 32)
        inter = getattr(cfg, "intermediate_size", 4 * hidden)
        elt = param.element_size()
        per_token = 2 * layers * kv_heads * head_dim * elt + (8 * hidden + 2 * inter) * elt
        free, _ = torch.cuda.mem_get_info(param.device)
        return int(min(max(0.5 * free / per_token, 512), 1 << 18))

    # ------------------------------------------------------------------ packed text questions
    def _can_pack(self, model) -> bool:
        if not self.packing or self._pack_checked.get(id(model)) is False:
            return False
        impl = hf.attn_implementation(model)
        if impl not in (None, "sdpa", "eager"):
            return False  # flash / flex kernels take no arbitrary 4-D mask
        return _accepts(model, "logits_to_keep") and _accepts(model, "position_ids")

    def _row_tokens(self, model, longest: int) -> int:
        if self.pack_tokens:
            return max(self.pack_tokens, longest)
        hidden = getattr(_text_config(model), "hidden_size", 1024)
        param = next(model.parameters())
        target = 2 * hidden if param.device.type == "cuda" else hidden // 2
        return max(longest, target, 64)

    def _score_packed(self, model, group: list[Prepared]) -> list:
        """Packed rows (longest question first, first fit); ``None`` where a question must go the cached way."""
        results: list = [None] * len(group)
        if not group:
            return results
        sizes = [_packed_len(p) for p in group]
        order = sorted(range(len(group)), key=lambda i: (-sizes[i], i))
        cap = self._row_tokens(model, sizes[order[0]])
        rows: list[list[int]] = []
        room: list[int] = []
        for i in order:
            for r, left in enumerate(room):
                if sizes[i] <= left:
                    rows[r].append(i)
                    room[r] -= sizes[i]
                    break
            else:
                rows.append([i])
                room.append(cap - sizes[i])
        prefixes = _token_lists([p.inputs["input_ids"][0] for p in group])  # one read-back for the group
        pending = list(rows)
        done: list = []  # (row, its log-probs on the device, their layout): read back together at the end
        while pending:
            row = pending.pop(0)
            qs = [group[i] for i in row]
            out, oom = None, False
            try:
                out = self._pack_row(model, qs, [prefixes[i] for i in row])
            except Exception as e:  # noqa: BLE001
                if not is_oom(e):
                    raise
                oom = True
            if oom:
                self.oom_events += 1
                _free_memory()
                if len(row) > 1:  # split the row in two and go on
                    half = len(row) // 2
                    pending[:0] = [row[:half], row[half:]]
                    self.pack_tokens = max(64, sum(sizes[i] for i in row) // 2)
                continue  # a single question that does not fit: the cached path (with its own fallbacks)
            if id(model) not in self._pack_checked:
                self._pack_checked[id(model)] = self._agrees_with_cached(model, qs[:2], _packed_scores(out[0].cpu(), out[1])[:2])
                if not self._pack_checked[id(model)]:
                    return results  # nothing kept: every question goes the cached way
            done.append((row, *out))
        if done:
            lps = torch.cat([lp for _, lp, _ in done]).cpu().split([lp.shape[0] for _, lp, _ in done])
            for (row, _, per), lp in zip(done, lps):
                for i, scores in zip(row, _packed_scores(lp, per)):
                    results[i] = scores
        return results

    def _agrees_with_cached(self, model, qs: list[Prepared], packed) -> bool:
        cached = [self._score_group(model, [p], None)[0] for p in qs]
        half = next(model.parameters()).dtype in (torch.float16, torch.bfloat16)
        tol = 0.1 if half else 1e-3
        worst = max((abs(a.sum_logprob - b.sum_logprob) for x, y in zip(cached, packed) for a, b in zip(x, y)
                     if a.num_tokens), default=0.0)
        if worst > tol:
            warnings.warn(f"packed scoring differs from the cached path by {worst:.3g} on "
                          f"{type(model).__name__}; this model is scored without packing", stacklevel=3)
            return False
        return True

    @staticmethod
    def _pack_row(model, qs: list[Prepared], prefixes: list[list[int]]):
        """One forward over several questions packed in one sequence under a tree attention mask: the
        log-probabilities of the scored tokens (on the device) and, per question and choice, their indices."""
        ids: list[int] = []
        pos: list[int] = []
        blocks = []  # (prefix start, prefix length, choice start, choice length)
        wanted = []  # (position whose logits predict, target token, question, choice)
        for q, (p, prefix) in enumerate(zip(qs, prefixes)):
            start, plen = len(ids), len(prefix)
            ids += prefix
            pos += range(plen)
            blocks.append((start, plen, start, plen))
            for c, cont in enumerate(p.continuations):
                if not cont:
                    continue
                wanted.append((start + plen - 1, cont[0], q, c))
                body = cont[:-1]
                cstart = len(ids)
                for k, tok in enumerate(body):
                    wanted.append((cstart + k, cont[k + 1], q, c))
                ids += body
                pos += range(plen, plen + len(body))
                if body:
                    blocks.append((start, plen, cstart, len(body)))
        device = input_device(model)
        t = len(ids)
        allowed = torch.zeros(t, t, dtype=torch.bool)
        for pstart, plen, cstart, clen in blocks:
            tri = torch.ones(clen, clen, dtype=torch.bool).tril()
            allowed[cstart:cstart + clen, cstart:cstart + clen] = tri
            if cstart != pstart:
                allowed[cstart:cstart + clen, pstart:pstart + plen] = True
        mask = _additive_mask(allowed, model)
        keep = sorted({w[0] for w in wanted})
        at = {k: j for j, k in enumerate(keep)}
        out = model(
            input_ids=to_device(torch.tensor([ids]), device),
            position_ids=to_device(torch.tensor([pos]), device),
            attention_mask=to_device(mask, device)[None, None],
            logits_to_keep=to_device(torch.tensor(keep), device),
            use_cache=False,
        )
        logits = out.logits[0].float()  # (len(keep), V)
        del out
        rows = to_device(torch.tensor([at[w[0]] for w in wanted]), logits.device)
        toks = to_device(torch.tensor([w[1] for w in wanted]), logits.device)
        lp = logits[rows, toks] - torch.logsumexp(logits, dim=-1)[rows]
        per = [[[] for _ in p.continuations] for p in qs]
        for k, (_, _, q, c) in enumerate(wanted):
            per[q][c].append(k)
        return lp, per

    # ------------------------------------------------------------------ the two passes
    def _score_group(self, model, group: list[Prepared], max_rows: int | None) -> list[list[ChoiceScore]]:
        pre = self._prefix_pass(model, group)
        if pre is None:  # caches that cannot be stacked: one question at a time
            return [s for p in group for s in self._score_group(model, [p], max_rows)]
        device = input_device(model)  # the choice pass's inputs (a dispatched model: the embeddings' device)
        # every choice's first token: from the prefix's last logits, one gather for the group
        heads = [(q, c, cont[0]) for q, p in enumerate(group) for c, cont in enumerate(p.continuations) if cont]
        first = torch.log_softmax(pre.last_logits.float(), dim=-1)  # (B, V)
        # each choice's pieces (first token, then the rest) stay on the device until ONE read-back per group
        pieces: list[list[list[torch.Tensor]]] = [[[] for _ in p.continuations] for p in group]
        if heads:
            qi = to_device(torch.tensor([q for q, _, _ in heads]), first.device)
            ti = to_device(torch.tensor([t for _, _, t in heads]), first.device)
            first_lp = first[qi, ti]
            for k, (q, c, _) in enumerate(heads):
                pieces[q][c].append(first_lp[k : k + 1])
        rows = [(q, c, cont) for q, p in enumerate(group) for c, cont in enumerate(p.continuations) if len(cont) > 1]
        tree = None
        if rows and max_rows is None and self.tree and self._tree_checked.get(id(model)) is not False:
            tree = self._tree_pass_checked(model, group, pre, rows, device)
            if tree is not None:
                for (q, c, _), lp in zip(rows, tree):
                    pieces[q][c].append(lp)
        if tree is None:
            step = max_rows or len(rows) or 1
            for start in range(0, len(rows), step):
                chunk = rows[start:start + step]
                rest = self._choice_pass(model, group, pre, chunk, device)
                for (q, c, _), lp in zip(chunk, rest):
                    pieces[q][c].append(lp)
        return [choice_scores(lps) for lps in _read_back(pieces)]

    def _prefix_pass(self, model, group: list[Prepared]) -> _Prefixes | None:
        keep = {"logits_to_keep": 1} if _accepts(model, "logits_to_keep") else {}
        if len(group) == 1:
            inputs = group[0].inputs
            out = model(**inputs, use_cache=True, **keep)
            p_len = inputs["input_ids"].shape[1]
            mask = inputs.get("attention_mask")
            if mask is None:
                mask = torch.ones_like(inputs["input_ids"])
            return _Prefixes(hf.out_cache(out), out.logits[:, -1], mask, [p_len], mixed=False,
                             deltas=[_rope_delta(model)] if _is_mrope(model) else None)
        extend = group[0].extend
        lengths = [p.inputs["input_ids"].shape[1] for p in group]
        width = max(lengths)
        if all(_text_only(p) for p in group):
            ids = group[0].inputs["input_ids"]
            device = ids.device
            batch = {}
            for name in group[0].inputs:
                fill = 0 if name in ("input_ids", "attention_mask") else extend[name]
                rows = []
                for p, n in zip(group, lengths):
                    t = p.inputs[name]
                    rows.append(torch.cat([torch.full((1, width - n), fill, dtype=t.dtype, device=device), t], 1))
                batch[name] = torch.cat(rows, 0)
            if "attention_mask" not in batch:
                batch["attention_mask"] = torch.cat(
                    [torch.cat([torch.zeros(1, width - n, dtype=torch.long, device=device),
                                torch.ones(1, n, dtype=torch.long, device=device)], 1) for n in lengths], 0)
            offsets = torch.tensor([width - n for n in lengths], device=device).view(-1, 1)
            position_ids = (torch.arange(width, device=device).view(1, -1) - offsets).clamp(min=0) + _position_base(model)
            out = model(**batch, position_ids=position_ids, use_cache=True, **keep)
            # text only: every position is 1-D (an M-RoPE model's three components agree, delta 0)
            return _Prefixes(hf.out_cache(out), out.logits[:, -1], batch["attention_mask"], lengths, mixed=True,
                             deltas=[0] * len(group) if _is_mrope(model) else None)
        # prefixes with images (or other family inputs): one pass each, caches stacked left-padded
        caches, last, masks, deltas = [], [], [], []
        for p, n in zip(group, lengths):
            out = model(**p.inputs, use_cache=True, **keep)
            if not hf.plain_layers(hf.out_cache(out)):
                return None
            deltas.append(_rope_delta(model) if _is_mrope(model) else 0)
            caches.append(hf.out_cache(out))
            last.append(out.logits[:, -1])
            m = p.inputs.get("attention_mask")
            if m is None:
                m = torch.ones_like(p.inputs["input_ids"])
            masks.append(torch.cat([torch.zeros(1, width - n, dtype=m.dtype, device=m.device), m], 1))
            del out
        cache = _stack_left_padded(caches, lengths, width)
        del caches
        return _Prefixes(cache, torch.cat(last, 0), torch.cat(masks, 0), lengths, mixed=True,
                         deltas=deltas if _is_mrope(model) else None)

    def _tree_pass_checked(self, model, group, pre: _Prefixes, rows, device) -> list[torch.Tensor] | None:
        """The tree choice pass; the first time for a model, also the row pass, compared (``None``: disagreed)."""
        if id(model) in self._tree_checked:
            return self._tree_pass(model, group, pre, rows, device)
        expected = self._choice_pass(model, group, pre, rows, device)  # before the tree pass extends the cache
        got = self._tree_pass(model, group, pre, rows, device)
        half = next(model.parameters()).dtype in (torch.float16, torch.bfloat16)
        worst = float(torch.stack([(a.float() - b.float()).abs().max() for a, b in zip(expected, got)]).max())
        ok = worst <= (0.1 if half else 1e-3)
        self._tree_checked[id(model)] = ok
        if not ok:
            warnings.warn(f"the tree choice pass differs from the row pass by {worst:.3g} on {type(model).__name__}; "
                          "this model's choices are scored one row each", stacklevel=4)
        return expected

    def _tree_pass(self, model, group, pre: _Prefixes, rows, device) -> list[torch.Tensor]:
        """All choices of a question in ONE row after its cached prefix: choice tokens (each choice's
        last token dropped) laid end to end, a 4-D mask letting each see the prefix and its own choice
        causally, positions restarting per choice. No cache row is copied per choice; the cache is
        extended in place, so it must not be used again."""
        per_q: dict[int, list] = {}
        for r, (q, _, cont) in enumerate(rows):
            per_q.setdefault(q, []).append((r, cont))
        order = sorted(per_q)
        width = max(sum(len(cont) - 1 for _, cont in per_q[q]) for q in order)
        n_q = len(pre.lengths)
        p_pad = pre.mask.shape[1]
        ids = torch.zeros(n_q, width, dtype=torch.long)
        targets = torch.zeros(n_q, width, dtype=torch.long)
        offsets = torch.zeros(n_q, width, dtype=torch.long)
        own = torch.zeros(n_q, width, width, dtype=torch.bool)  # choice token -> choice tokens it sees
        sees_prefix = torch.zeros(n_q, width, 1, dtype=torch.bool)
        where = {}  # row -> (question, start, length)
        for q in range(n_q):  # a question without rows: all padding
            at = 0
            for r, cont in per_q.get(q, []):
                n = len(cont) - 1
                t = torch.tensor(cont, dtype=torch.long)
                ids[q, at:at + n], targets[q, at:at + n] = t[:-1], t[1:]
                offsets[q, at:at + n] = torch.arange(n)
                own[q, at:at + n, at:at + n] = torch.ones(n, n, dtype=torch.bool).tril()
                sees_prefix[q, at:at + n] = True
                where[r] = (q, at, n)
                at += n
            own[q, torch.arange(at, width), torch.arange(at, width)] = True  # padding sees itself only
        prefix_mask = pre.mask.to(device).bool()[:, None, :] & to_device(sees_prefix, device)  # (n_q, width, p_pad)
        allowed = torch.cat([prefix_mask, to_device(own, device)], -1)
        starts = _choice_starts(model, pre, range(n_q), device).view(-1, 1)
        kw = {"input_ids": to_device(ids, device), "attention_mask": _additive_mask(allowed, model)[:, None],
              **hf.cache_kw(model, pre.cache), "position_ids": starts + to_device(offsets, device), "use_cache": True}
        lp = _choice_logprobs(model, group, kw, to_device(targets, device))
        return [lp[where[r][0], where[r][1]:where[r][1] + where[r][2]] for r in range(len(rows))]

    def _choice_pass(self, model, group, pre: _Prefixes, rows, device) -> list[torch.Tensor]:
        """One forward over the rows' choice tokens (all but the last), right-padded; log-probs of tokens 1..L-1."""
        n_rows = len(rows)
        width = max(len(cont) - 1 for _, _, cont in rows)
        ids = torch.zeros(n_rows, width, dtype=torch.long)
        targets = torch.zeros(n_rows, width, dtype=torch.long)
        choice_mask = torch.zeros(n_rows, width, dtype=pre.mask.dtype)
        for r, (_, _, cont) in enumerate(rows):
            t = torch.tensor(cont, dtype=torch.long)
            ids[r, : len(cont) - 1] = t[:-1]
            targets[r, : len(cont) - 1] = t[1:]
            choice_mask[r, : len(cont) - 1] = 1
        q_idx = to_device(torch.tensor([q for q, _, _ in rows], dtype=torch.long), device)
        kw = {
            "input_ids": to_device(ids, device),
            "attention_mask": torch.cat([pre.mask.to(device).index_select(0, q_idx), to_device(choice_mask, device)], 1),
            **hf.cache_kw(model, _select_rows(pre.cache, q_idx)),
            "use_cache": True,
        }
        if pre.mixed or pre.deltas is not None:
            starts = _choice_starts(model, pre, [q for q, _, _ in rows], device).view(-1, 1)
            kw["position_ids"] = starts + torch.arange(width, device=device).view(1, -1)
        lp = _choice_logprobs(model, group, kw, to_device(targets, device))
        return [lp[r, : len(cont) - 1] for r, (_, _, cont) in enumerate(rows)]


def _device_type(model) -> str:
    try:
        return next(model.parameters()).device.type
    except (AttributeError, StopIteration):
        return "cpu"


def _choice_starts(model, pre: _Prefixes, questions, device) -> torch.Tensor:
    """Position of the first choice token of each question, on ``device``: text after the prefix gets 1-D
    positions (for M-RoPE all three components equal, shifted by the question's delta from the
    prefix's vision tokens, a device tensor read back by nobody), from the model's position base."""
    questions = list(questions)
    base = _position_base(model)
    starts = to_device(torch.tensor([base + pre.lengths[q] for q in questions]), device)
    shift = [pre.deltas[q] for q in questions] if pre.deltas else []
    if not any(isinstance(s, torch.Tensor) or s for s in shift):
        return starts
    return starts + torch.stack([torch.as_tensor(s).to(device).reshape(()) for s in shift]).to(starts.dtype)


def _read_back(pieces: list[list[list[torch.Tensor]]]) -> list[list[torch.Tensor]]:
    """Each choice's log-probabilities on the CPU, from its pieces on the device: one copy for all."""
    flat = [t for q in pieces for c in q for t in c]
    if not flat:
        return [[torch.zeros(0) for _ in q] for q in pieces]
    host = iter(torch.cat([t.reshape(-1).float() for t in flat]).cpu().split([t.numel() for t in flat]))
    return [[torch.cat([next(host) for _ in c]) if c else torch.zeros(0) for c in q] for q in pieces]


def _packed_scores(lp: torch.Tensor, per) -> list[list[ChoiceScore]]:
    """Choice scores of a packed row from its scored tokens' log-probabilities (read back) and layout."""
    return [choice_scores([lp[idx] if idx else torch.zeros(0) for idx in choice]) for choice in per]


def _token_lists(rows: list[torch.Tensor]) -> list[list[int]]:
    """1-D token tensors as lists, with one read-back for all."""
    flat = torch.cat(rows).tolist()
    out, at = [], 0
    for r in rows:
        out.append(flat[at:at + r.shape[0]])
        at += r.shape[0]
    return out


def _additive_mask(allowed: torch.Tensor, model) -> torch.Tensor:
    """A boolean "may attend" tensor as the additive float mask eager and sdpa attention both take."""
    param = next(model.parameters())
    dtype = param.dtype if param.is_floating_point() else torch.float32
    return torch.zeros(allowed.shape, dtype=dtype, device=allowed.device).masked_fill_(~allowed, torch.finfo(dtype).min)


def _choice_logprobs(model, group: list[Prepared], kw: dict, targets: torch.Tensor) -> torch.Tensor:
    """Run a choice pass (``kw`` plus the family's per-token inputs at their continuation values,
    e.g. PaliGemma's ``token_type_ids``) and return each position's log-probability of ``targets``."""
    prefix_inputs = group[0].inputs
    for name, fill in group[0].extend.items():
        if name != "attention_mask" and name in prefix_inputs and prefix_inputs[name] is not None:
            kw[name] = torch.full(tuple(targets.shape), fill, dtype=prefix_inputs[name].dtype, device=targets.device)
    logits = model(**kw).logits
    kw.clear()
    picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1).float()
    return picked - torch.logsumexp(logits.float(), dim=-1)  # on the device: read back once per group


def _accepts(model, name: str) -> bool:
    try:
        params = inspect.signature(model.forward).parameters
    except (AttributeError, TypeError, ValueError):
        return False
    return name in params


def _position_base(model) -> int:
    """Position of a sequence's first token: 1 for PaliGemma (its forward adds 1 to the cache
    positions), 0 for everyone else; the adapter sets ``position_base`` on the model from its family record."""
    return getattr(model, "position_base", 0)


def _is_mrope(model) -> bool:
    """Multimodal rotary positions (Qwen2-VL / Qwen2.5-VL): three position components per token."""
    inner = getattr(model, "model", None)
    return hasattr(model, "get_rope_index") or hasattr(inner, "get_rope_index")


def _rope_owner(model):
    return hf.rope_owner(model)


def _rope_delta(model):
    """After a batch-1 prefill: position of the next text token minus its index in the sequence (a device
    tensor, not read back: ``_choice_starts`` adds it on the device)."""
    delta = hf.last_rope_deltas(model)
    return delta.reshape(-1)[0].clone() if delta is not None else 0


def _packable_shape(p: Prepared) -> bool:
    """Plain text: token ids (and a mask), continuations that only extend the mask."""
    if set(p.inputs) - {"input_ids", "attention_mask"} or set(p.extend) - {"attention_mask"}:
        return False
    ids = p.inputs["input_ids"]
    return isinstance(ids, torch.Tensor) and ids.dim() == 2 and ids.shape[0] == 1


def _packable_all(group: list[Prepared]) -> list[bool]:
    """Which questions are plain text with an all-ones mask: the masks are checked with one read-back."""
    shaped = [_packable_shape(p) for p in group]
    masks = [(i, p.inputs.get("attention_mask")) for i, (p, ok) in enumerate(zip(group, shaped)) if ok]
    masks = [(i, m) for i, m in masks if m is not None]
    if masks:
        ones = torch.stack([(m == 1).all().to(masks[0][1].device) for _, m in masks]).tolist()
        for (i, _), ok in zip(masks, ones):
            shaped[i] = ok
    return shaped


def _packable(p: Prepared) -> bool:
    return _packable_all([p])[0]


def _packed_len(p: Prepared) -> int:
    return int(p.inputs["input_ids"].shape[1]) + sum(max(len(c) - 1, 0) for c in p.continuations)


def _text_only(p: Prepared) -> bool:
    """Only per-token tensors of shape (1, P): the prefix can be left-padded into a batch."""
    n = p.inputs["input_ids"].shape[1]
    for name, v in p.inputs.items():
        if name not in _TOKEN_KEYS and name not in p.extend:
            return False
        if not isinstance(v, torch.Tensor) or v.dim() != 2 or tuple(v.shape) != (1, n):
            return False
    return True

