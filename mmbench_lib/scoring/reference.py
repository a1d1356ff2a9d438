"""Answer ranking: the log-likelihood a model gives each choice's content after the prompt.

SEED-Bench §3.4 and SEED-Bench-2 §3.4: "for each choice, the likelihood that the model
generates the content of the choice given the question; the highest wins" (no letters asked
for). Both reductions come from the same token log-probabilities (docs/protocols.md §1.6 P-S3): ``sum`` is the
LAVIS reference (v1 paper parity), ``mean`` what the HF InstructBLIP, LLaVA and Qwen wrappers use.

Scorers turn a ``Prepared`` request (prefix inputs + tokenised continuations) into
``ChoiceScore``s. ``ReferenceScorer`` runs one forward pass per choice; a faster engine
implements the same ``score(model, prepared)`` call and can replace it without touching callers.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from mmbench_lib.core.requests import ChoiceScore
from mmbench_lib.scoring.names import REDUCTIONS  # noqa: F401 - re-exported


@dataclass
class Prepared:
    """One question ready for a decoder-only model.

    ``inputs`` are the model inputs of the prefix (batch of 1: ``input_ids``, ``attention_mask``
    and whatever the family needs, e.g. ``pixel_values``); ``continuations`` the token ids of
    each choice; ``extend`` maps a per-token input name to the value its continuation
    positions take (``attention_mask`` -> 1, ``token_type_ids`` -> 0 ...).
    """

    inputs: dict
    continuations: list[list[int]]
    extend: dict


def choice_scores(token_logprobs: list[torch.Tensor]) -> list[ChoiceScore]:
    """Summed and mean log-likelihood for each choice's token log-probabilities."""
    out = []
    for lp in token_logprobs:
        n = int(lp.numel())
        s = float(lp.double().sum()) if n else 0.0
        out.append(ChoiceScore(sum_logprob=s, mean_logprob=s / n if n else float("-inf"), num_tokens=n))
    return out


def pick(scores: list[ChoiceScore], reduction: str = "sum") -> int:
    """Index of the highest-scoring choice; ties go to the lowest index (official argsort)."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    values = [s.sum_logprob if reduction == "sum" else s.mean_logprob for s in scores]
    best = 0
    for i, v in enumerate(values):
        if v > values[best]:
            best = i
    return best


#: an extend rule: the continuation's tokens repeat the prefix's last token's row (any trailing dimensions)
LAST = "last"


def extend_inputs(inputs: dict, extend: dict, cont: torch.Tensor) -> dict:
    """Prefix inputs with one continuation appended to every per-token tensor."""
    n = cont.shape[-1]
    out = dict(inputs)
    out["input_ids"] = torch.cat([inputs["input_ids"], cont.view(1, -1).to(inputs["input_ids"].device)], dim=1)
    for name, fill in extend.items():
        if name in inputs and inputs[name] is not None:
            t = inputs[name]
            if fill == LAST:  # each choice token as the prompt's last one (mllama's cross_attention_mask, as generate)
                out[name] = torch.cat([t, t[:, -1:].expand(t.shape[0], n, *t.shape[2:])], dim=1)
                continue
            out[name] = torch.cat([t, torch.full((t.shape[0], n), fill, dtype=t.dtype, device=t.device)], dim=1)
    return out


class ReferenceScorer:
    """One forward pass per choice over ``prefix + choice``: simple, slow, obviously right."""

    name = "reference"

    @torch.inference_mode()
    def score(self, model, prepared: Prepared) -> list[ChoiceScore]:
        prefix_len = prepared.inputs["input_ids"].shape[1]
        logprobs = []
        for cont in prepared.continuations:
            if not cont:
                logprobs.append(torch.zeros(0))
                continue
            ids = torch.tensor(cont, dtype=torch.long)
            inputs = extend_inputs(prepared.inputs, prepared.extend, ids)
            logits = model(**inputs).logits[0, prefix_len - 1 : prefix_len - 1 + len(cont)].float()
            lp = torch.log_softmax(logits, dim=-1)
            logprobs.append(lp.gather(-1, ids.to(lp.device).view(-1, 1)).view(-1).cpu())
        return choice_scores(logprobs)
