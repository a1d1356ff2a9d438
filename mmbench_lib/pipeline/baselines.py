"""Baselines that answer without a model (MMMU §4.1, CMMMU §4.1).

Their answer is stored as the "response" and goes through the same official parsers as a model's.
What a baseline may answer comes from the benchmark's task module (``baseline_choices``,
``answer_kind``, ``baseline_answer``), so nothing here names a benchmark.
"""
from __future__ import annotations

import json
import random
import zlib
from collections import Counter

from mmbench_lib.tasks.base import get_task
from mmbench_lib.core.items import Item

#: ``generation.baseline`` values (the run spec): the model generates (none), Random / Frequent Choice, LLM + OCR
BASELINES = ("none", "random", "frequent", "ocr")
#: baselines that learn their answers from a split other than the scored one (the task's ``validation_split``)
LEARNS_FROM_SPLIT = {"frequent": "Frequent Choice"}


def refusal(benchmark: str, baseline: str) -> str | None:
    """Why ``baseline`` cannot run on ``benchmark`` (one line), or ``None``: a baseline that learns from a
    split needs the task's ``validation_split``; without one it would count the gold of the items it is
    scored on (MMMU-Pro: one hub split, its settings the same questions)."""
    task = get_task(benchmark)
    if baseline not in LEARNS_FROM_SPLIT or task.validation_split is not None:
        return None
    return (f"{LEARNS_FROM_SPLIT[baseline]} learns answers from a validation split and {task.title} has none "
            f"besides the scored items (splits {', '.join(task.splits)}): it would count their gold answers; "
            f"use baseline random, none or ocr")


class RandomAnswer:
    """Random Choice: a uniformly random option per multiple-choice (and CMMMU true/false) question,
    seeded by (seed, item id) so a resumed run answers the same. Open / fill-in questions get an
    empty answer (scored wrong): there is no option to pick. CMMMU MC picks one letter of A-D."""

    name = "random"
    sees_images = False

    def __init__(self, seed: int = 0):
        self.seed = seed

    def answer(self, item: Item) -> str:
        choices = get_task(item.benchmark).baseline_choices(item)
        if not choices:
            return ""
        return random.Random(zlib.crc32(f"{self.seed}:{item.id}".encode())).choice(choices)

    def describe(self) -> dict:
        return {"adapter": "RandomAnswer", "baseline": "random", "seed": self.seed,
                "open_questions": "empty answer (scored wrong)"}


def _gold_key(item: Item) -> str | None:
    a = item.answer
    if a is None:
        return None
    return json.dumps(a, ensure_ascii=False) if isinstance(a, list) else str(a)


def frequent_table(validation_items: list[Item]) -> dict:
    """Most frequent gold answer per (subject, answer kind) over validation items (MMMU §4.1, CMMMU §4.1).

    Kinds: MMMU "multiple-choice" / "short-answer"; CMMMU 选择 / 判断 / 填空. Ties go to the answer
    seen first in data order (letters therefore not alphabetically). ``"*"`` holds the split-wide
    most frequent answer per kind, used for a subject with no validation item of that kind.
    """
    counts: dict[tuple[str, str], Counter] = {}
    for it in validation_items:
        key = _gold_key(it)
        if key is None:
            continue
        kind = get_task(it.benchmark).answer_kind(it)
        for subject in (it.dimension, "*"):
            counts.setdefault((subject, kind), Counter())[key] += 1
    table: dict[str, dict[str, str]] = {}
    for (subject, kind), c in counts.items():
        best = max(c.values())
        table.setdefault(subject, {})[kind] = next(k for k, v in c.items() if v == best)  # first seen among ties
    return table


class FrequentAnswer:
    """Frequent Choice: per subject, the most frequent gold answer of the validation split for the
    question's kind (``frequent_table``); for MMMU open questions the most frequent answer string
    (a list gold counts as one answer, stored as its JSON; its first element is answered)."""

    name = "frequent"
    sees_images = False

    def __init__(self, table: dict, source: str = "validation split"):
        self.table, self.source = table, source

    def answer(self, item: Item) -> str:
        task = get_task(item.benchmark)
        kind = task.answer_kind(item)
        value = self.table.get(item.dimension, {}).get(kind) or self.table.get("*", {}).get(kind) or ""
        if value.startswith("["):
            try:
                value = str(json.loads(value)[0])
            except (ValueError, IndexError):
                pass
        return task.baseline_answer(item, value)

    def describe(self) -> dict:
        return {"adapter": "FrequentAnswer", "baseline": "frequent", "source": self.source, "table": self.table}
