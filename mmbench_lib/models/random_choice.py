"""Random Choice baseline: every continuation gets a seeded random score.

The papers' "Random Choice" row (SEED §4, MMMU §4.1). Scores depend only on (seed, item id,
choice index), so a resumed run gives the same predictions as an uninterrupted one.
"""
from __future__ import annotations

import random
import zlib

from mmbench_lib.core.requests import ChoiceScore, Generation, GenerateRequest, ScoreRequest
from mmbench_lib.models.registry import register_model


class RandomChoice:
    name = "random"
    sees_images = False
    can_output_images = False

    def __init__(self, seed: int = 0):
        self.seed = seed

    def _rng(self, item_id: str) -> random.Random:
        return random.Random(zlib.crc32(f"{self.seed}:{item_id}".encode()))

    def score_choices(self, requests: list[ScoreRequest]) -> list[list[ChoiceScore]]:
        out = []
        for r in requests:
            rng = self._rng(r.id)
            out.append([ChoiceScore(v, v, 1) for v in (rng.random() for _ in r.continuations)])
        return out

    def generate(self, requests: list[GenerateRequest]) -> list[Generation]:
        raise NotImplementedError("the random baseline does not generate text; parsers' random fallback covers it")

    def describe(self) -> dict:
        return {"adapter": "random", "name": self.name, "seed": self.seed}


@register_model("random", can_generate=False)
def load_random(target, **_):
    """``random`` or ``random:<seed>``: the Random Choice baseline."""
    try:
        return RandomChoice(seed=int(target or 0))
    except ValueError:
        raise ValueError(f"model spec 'random:{target}': the seed after the colon must be an integer") from None
