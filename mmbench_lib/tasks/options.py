"""Option order of lettered multiple choice: cyclic rotations and seeded permutations (CircularEval).

SEED-Bench §3.4 (v1) ranks the choices' *content*, which "eliminates the impact of the order of
multiple-choice options"; the letter protocols (the leaderboard's "PPL for A/B/C/D", recipe
``qwen-vl-letters``) and generated letters (MMMU §3 / CMMMU §3.3 prompts, parsed by the official
rules) do not. MMBench's CircularEval (Liu et al., 2023) asks each question once per cyclic shift of
its options and counts it right only when every shift is answered right; this module makes the
shifted items, and ``mmbench_lib.reports.circular`` turns their runs into the report.

More: docs/modules.md, ``mmbench_lib/tasks/options.py``.
"""
from __future__ import annotations

import random
from dataclasses import replace

from mmbench_lib.core.items import LETTERS, Item


def lettered(item: Item) -> bool:
    """A multiple-choice item answered by option letter: two or more options and a gold answer made of
    their letters (or withheld, on a test split); options drawn in the image (``options_in_image``) are not."""
    if len(movable(item)) < 2 or item.meta.get("options_in_image"):
        return False
    if item.answer is None:
        return True
    gold = gold_letters(item.answer)
    return gold is not None and all(g in item.letters for g in gold)


def movable(item: Item) -> list[int]:
    """Indices of the options that take part in a rotation (the non-empty ones)."""
    return [i for i, c in enumerate(item.choices) if str(c).strip() != ""]


def gold_letters(answer) -> list[str] | None:
    """The gold letters of an answer: ``"B"`` -> ``["B"]``, ``"AC"`` -> ``["A", "C"]``, a list as is;
    ``None`` for anything that is not made of letters (an open answer)."""
    if isinstance(answer, list):
        return [str(a) for a in answer] if answer and all(isinstance(a, str) and len(a) == 1 and a in LETTERS
                                                          for a in answer) else None
    if isinstance(answer, str) and answer and answer.isascii() and all(c in LETTERS for c in answer):
        return list(answer)
    return None


def rotation_order(n: int, k: int) -> list[int]:
    """``order`` of rotation ``k`` of ``n`` options (module doc)."""
    return [(j + k) % n for j in range(n)]


def permutation_order(n: int, seed: int, item_id: str) -> list[int]:
    """``order`` of seeded permutation ``seed`` for one item (module doc)."""
    order = list(range(n))
    random.Random(f"{seed}:{item_id}").shuffle(order)
    return order


def _full_order(item: Item, order_of_movable: list[int]) -> list[int]:
    """An order over all options from one over the movable ones (padding keeps its place)."""
    idx = movable(item)
    full = list(range(len(item.choices)))
    for j, o in zip(idx, order_of_movable):
        full[j] = idx[o]
    return full


def _remap(answer, order: list[int]):
    """The gold answer under ``order`` (original letter -> shown letter)."""
    shown = {LETTERS[o]: LETTERS[j] for j, o in enumerate(order)}
    if isinstance(answer, list):
        return [shown[a] for a in answer]
    if isinstance(answer, str) and len(answer) > 1:
        return "".join(sorted(shown[a] for a in answer))
    return shown[answer] if isinstance(answer, str) else answer


def arrange(item: Item, order: list[int]) -> Item:
    """``item`` with its options shown in ``order`` (over all options) and its gold letters moved
    with them; ``meta["option_order"]`` records ``order``. Letter-keyed metadata (MMMU's
    ``option_images``) and SEED-2's option images (``choice_images``) move too; a raw answer string
    kept for the official files is dropped, since the moved ``answer`` replaces it."""
    if sorted(order) != list(range(len(item.choices))):
        raise ValueError(f"item {item.id!r}: {order} is not an order of its {len(item.choices)} options")
    meta = {k: v for k, v in item.meta.items() if k != "answer_raw"}
    meta["option_order"] = list(order)
    if isinstance(meta.get("option_images"), dict):
        inverse = {LETTERS[o]: LETTERS[j] for j, o in enumerate(order)}
        meta["option_images"] = {inverse[k]: v for k, v in meta["option_images"].items() if k in inverse}
    choice_images = [item.choice_images[o] for o in order] if len(item.choice_images) == len(order) else item.choice_images
    choices = [item.choices[o] for o in order]
    images = item.images
    tags = meta.get("image_tags")
    if isinstance(tags, list) and len(tags) == len(images):  # images in the order of their placeholders
        text = " ".join([item.question or "", *map(str, choices)])
        rank = sorted(range(len(tags)), key=lambda i: (text.find(tags[i]) if tags[i] in text else len(text), i))
        images, meta["image_tags"] = [images[i] for i in rank], [tags[i] for i in rank]
    return replace(item, choices=choices, choice_images=choice_images, images=images,
                   answer=_remap(item.answer, order), meta=meta)


def to_original(letters, order) -> str | list | None:
    """Shown letter(s) mapped back to the original option letter(s) under ``order`` (``None`` or an
    unknown letter maps to ``None``; several letters come back in ABCD order; a list stays a list)."""
    if letters is None:
        return None
    if order is None:
        return letters
    back = {LETTERS[j]: LETTERS[o] for j, o in enumerate(order)}
    if isinstance(letters, list):
        out = [back.get(str(x)) for x in letters]
        return None if None in out else out
    if not isinstance(letters, str) or not letters or any(c not in back for c in letters):
        return None
    return "".join(sorted(back[c] for c in letters))


def select_and_arrange(items: list[Item], rotation: int = 0, permutation_seed: int | None = None,
                       lettered_only: bool = False, limit: int | None = None) -> list[Item]:
    """The items a run with these option settings asks (``selection.rotation`` / ``permutation_seed`` /
    ``lettered_only`` / ``limit``): lettered items only when asked (or when the order changes), the
    first ``limit`` of them, then each arranged. Rotation ``k`` keeps the items with more than ``k``
    movable options. Nothing is arranged (items returned as given) when all settings are defaults."""
    if rotation < 0:
        raise ValueError(f"rotation must be >= 0, got {rotation}")
    if rotation and permutation_seed is not None:
        raise ValueError("give a rotation or a permutation seed, not both")
    moved = rotation > 0 or permutation_seed is not None
    if not (moved or lettered_only):
        return items[:limit] if limit else items
    items = [it for it in items if lettered(it)]
    items = items[:limit] if limit else items
    out = []
    for it in items:
        n = len(movable(it))
        if permutation_seed is not None:
            out.append(arrange(it, _full_order(it, permutation_order(n, permutation_seed, it.id))))
        elif rotation < n:
            out.append(arrange(it, _full_order(it, rotation_order(n, rotation))))
    return out
