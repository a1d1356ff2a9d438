"""Ranking and generation on token ids through a vLLM server's ``/v1/completions`` (no images).

Ranking (SEED-Bench §3.4, SEED-Bench-2 §3.4; docs/protocols.md §1.5): one request per question carries every
choice's prompt ``prefix ids + continuation ids`` (a batch of token-id prompts), ``max_tokens`` 1 and
``prompt_logprobs`` 0, which returns, for each prompt position, the log-probability of the token that stands
there (vLLM's sampler computes a full ``log_softmax`` over the vocabulary in fp32). The log-likelihood of a
choice is the sum over its continuation positions, in the same arithmetic as the HF scorers
(``mmbench_lib.scoring.reference.choice_scores``): both reductions, ``sum`` and ``mean``, come from it.

The ids are the HF path's own (``LocalPrompts``: ``HFCausalLM``'s rendering and tokenisation) or, against a server
with no local tokenizer, the server's ``/tokenize`` (``ServerPrompts``): the same rendering rule (chat template with
the generation prompt, no added special tokens; plain text with them), done by the served tokenizer.
"""
from __future__ import annotations

import math

from mmbench_lib.core.requests import IMAGE, ChoiceScore

#: How far above 0 a served log-probability may be and still be read as 0: vLLM's sampler computes
#: ``logits - logsumexp(logits)`` in fp32, whose rounding can leave a token that takes all the mass a few ulps
#: above 0. One fp32 ulp at 4096 (logits or their logsumexp of that size) is 2**-11 = 4.9e-4; two ulps: 1e-3.
#: Anything larger, or not finite (NaN, inf), is not a log-probability and fails the item.
LOGPROB_TOLERANCE = 1e-3


class LocalPrompts:
    """Token ids exactly as the HF text path builds them (``mmbench_lib.models.hf.HFCausalLM``): reuses its
    ``_text`` / ``token_ids`` / ``continuation_ids`` / ``finish`` on a tokenizer, without a model."""

    def __init__(self, tokenizer, append_eos: bool = False):
        from mmbench_lib.models.hf import HFCausalLM

        class _TokenizerOnly(HFCausalLM):
            def __init__(self, tok, eos):  # noqa: D401 - no model: only the text methods are used
                self.tokenizer, self.append_eos = tok, eos

        self._hf = _TokenizerOnly(tokenizer, append_eos)
        self.tokenizer = tokenizer

    def prefix_ids(self, prompt: str, chat: bool) -> list[int]:
        text, special = self._hf._text(prompt, chat)
        return self._hf.token_ids(text, special)

    def continuation_ids(self, text: str) -> list[int]:
        return self._hf.continuation_ids(text)

    def finish(self, request, new_ids: list[int]):
        return self._hf.finish(request, new_ids)


class ServerPrompts:
    """Token ids from the server's ``POST /tokenize`` (vLLM): for an endpoint without a local tokenizer."""

    def __init__(self, post_root):
        self._post = post_root  # callable(path, body) -> JSON answer, on the server's root URL
        self._cache: dict = {}

    def _tokens(self, body: dict) -> list[int]:
        key = repr(sorted(body.items()))
        if key not in self._cache:
            self._cache[key] = list(self._post("/tokenize", body)["tokens"])
        return self._cache[key]

    def prefix_ids(self, prompt: str, chat: bool) -> list[int]:
        text = prompt.replace(IMAGE, "")
        if chat:
            return self._tokens({"messages": [{"role": "user", "content": text}], "add_generation_prompt": True,
                                 "add_special_tokens": False})
        return self._tokens({"prompt": text, "add_special_tokens": True})

    def continuation_ids(self, text: str) -> list[int]:
        return self._tokens({"prompt": text, "add_special_tokens": False})


def ranking_body(model: str, prefix: list[int], continuations: list[list[int]], extra: dict) -> dict:
    """One completions request scoring every choice of a question (empty continuations are not sent)."""
    prompts = [prefix + c for c in continuations if c]
    return {**extra, "model": model, "prompt": prompts, "max_tokens": 1, "temperature": 0, "prompt_logprobs": 0}


def continuation_logprobs(choice: dict, ids: list[int], start: int, where: str) -> list[float]:
    """The log-probabilities of ``ids[start:]`` read from one choice's ``prompt_logprobs`` (entry ``j`` holds
    ``{str(token id): {"logprob": ...}}`` for prompt position ``j``; entry 0 is null)."""
    entries = choice.get("prompt_logprobs")
    if not isinstance(entries, list) or len(entries) != len(ids):
        raise ValueError(f"{where}: prompt_logprobs has {len(entries) if isinstance(entries, list) else 'no'} "
                         f"entries for a prompt of {len(ids)} tokens (a server that is not vLLM, or prefix caching "
                         f"read for a prompt-logprob request)")
    out = []
    for j in range(start, len(ids)):
        entry = entries[j] or {}
        hit = entry.get(str(ids[j]))
        if hit is None:
            raise ValueError(f"{where}: prompt_logprobs at position {j} has no entry for token {ids[j]}")
        value = hit["logprob"] if isinstance(hit, dict) else hit
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{where}: prompt_logprobs at position {j} is {value!r}, not a number")
        if not math.isfinite(value) or value > LOGPROB_TOLERANCE:
            raise ValueError(f"{where}: prompt_logprobs at position {j} is {value!r}: a log-probability is finite "
                             f"and <= 0 (tolerance {LOGPROB_TOLERANCE:g} for fp32 rounding); the server's answer "
                             f"cannot be ranked")
        out.append(float(value))
    return out


def scores_from(data: dict, prefix: list[int], continuations: list[list[int]], where: str) -> list[ChoiceScore]:
    """``ChoiceScore`` per continuation from a ``ranking_body`` answer; an empty continuation scores 0 over 0 tokens
    as in the HF scorers."""
    import torch

    from mmbench_lib.scoring.reference import choice_scores

    choices = sorted(data["choices"], key=lambda c: c["index"])
    sent = [c for c in continuations if c]
    if len(choices) != len(sent):
        raise ValueError(f"{where}: {len(choices)} choices answered for {len(sent)} prompts")
    it = iter(choices)
    lps = []
    for c in continuations:
        if not c:
            lps.append(torch.zeros(0))
            continue
        lp = continuation_logprobs(next(it), prefix + c, len(prefix), where)
        lps.append(torch.tensor(lp, dtype=torch.float64))
    return choice_scores(lps)


def generation_body(model: str, prompt_ids: list[int], max_new_tokens: int, extra: dict) -> dict:
    """Greedy completion of a token-id prompt, the new token ids returned (``return_token_ids``)."""
    return {**extra, "model": model, "prompt": prompt_ids, "max_tokens": max_new_tokens, "temperature": 0,
            "return_token_ids": True}


def generated_ids(data: dict, where: str) -> tuple[list[int], str | None]:
    choice = data["choices"][0]
    ids = choice.get("token_ids")
    if ids is None:
        raise ValueError(f"{where}: the answer has no token_ids (the server ignored return_token_ids: not vLLM >= 0.10.2)")
    return list(ids), choice.get("finish_reason")
