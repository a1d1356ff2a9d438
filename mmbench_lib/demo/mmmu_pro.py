"""MMMU-Pro demo in the hub layout of ``MMMU/MMMU_Pro``: the three configs ``standard (4 options)``,
``standard (10 options)`` and ``vision`` (one parquet each, split ``test``), the same questions in each.

Every answer can be read off the pixels (a word or a value in large black text). One template has
images as options whose ``<image k>`` placeholders are shuffled, so placeholder order is not column
order (the official README's "Important Note"). The vision screenshot renders question and options.
"""
from __future__ import annotations

import random
from pathlib import Path

from PIL import Image, ImageDraw

from mmbench_lib.demo.draw import SEED, WHITE, WORDS, load_font, text_image, write_hf_parquet

SUBJECTS = ("Art", "History", "Math", "Physics", "Accounting", "Computer_Science")
STANDARD_COLUMNS = ("id", "question", "options", "explanation", *(f"image_{k}" for k in range(1, 8)), "img_type",
                    "answer", "topic_difficulty", "subject")
VISION_COLUMNS = ("id", "image", "options", "answer", "subject")
LETTERS = "ABCDEFGHIJ"


def _ten(rng: random.Random, gold: str, pool) -> tuple[list[str], str]:
    others = [p for p in dict.fromkeys(pool) if p != gold]
    opts = [gold] + rng.sample(others, 9)
    rng.shuffle(opts)
    return opts, LETTERS[opts.index(gold)]


def _four(rng: random.Random, ten: list[str], gold_letter: str) -> tuple[list[str], str]:
    """The 4-option version: the gold and three of the distractors, in their 10-option order."""
    gi = LETTERS.index(gold_letter)
    keep = sorted([gi, *rng.sample([i for i in range(10) if i != gi], 3)])
    return [ten[i] for i in keep], LETTERS[keep.index(gi)]


def _row(rng: random.Random, kind: str, qid: str, subject: str) -> dict:
    big = load_font(64)
    row = {f"image_{k}": None for k in range(1, 8)}
    row.update(id=qid, subject=subject, explanation="?", topic_difficulty=rng.choice(("Easy", "Medium", "Hard")))
    if kind == "word":
        word = rng.choice(WORDS)
        row["image_1"] = text_image([word], big, size=(420, 150))
        opts, ans = _ten(rng, word, WORDS)
        row.update(question="Which word is written in <image 1>?", img_type="['Other']", _ten=opts, _ans=ans)
    elif kind == "value":
        v = rng.randint(12, 89)
        row["image_1"] = text_image([f"x = {v}"], big)
        opts, ans = _ten(rng, str(v), [str(v + d) for d in (-11, -7, -3, -2, -1, 1, 2, 5, 9, 13)])
        row.update(question="<image 1> What is the value of x?", img_type="['Mathematical Notations']", _ten=opts, _ans=ans)
    else:  # "images": options are images whose placeholders are shuffled
        words = rng.sample(WORDS, 4)
        gold = rng.randrange(4)
        for k, w in enumerate(words, start=1):
            row[f"image_{k}"] = text_image([w], big, size=(420, 150))
        tags = [f"<image {k}>" for k in range(1, 5)]
        order = rng.sample(range(4), 4)
        opts = [tags[i] for i in order]
        ans = LETTERS[order.index(gold)]
        row.update(question=f"Which image shows the word {words[gold]}?", img_type="['Other']", _opts4=opts, _ans4=ans)
    return row


def _screenshot(question: str, options: list[str], images: list) -> Image.Image:
    """The vision setting: question, pasted images and ``A. option`` lines on one white page."""
    font, small = load_font(26), load_font(22)
    thumbs = [im.resize((210, 75)) for im in images if im is not None]
    height = 60 + 40 + 90 * ((len(thumbs) + 2) // 3) + 34 * len(options) + 20
    page = Image.new("RGB", (720, height), WHITE)
    d = ImageDraw.Draw(page)
    d.text((20, 20), question, font=font, fill=(0, 0, 0))
    y = 70
    for i, t in enumerate(thumbs):
        page.paste(t, (20 + 230 * (i % 3), y + 90 * (i // 3)))
    y += 90 * ((len(thumbs) + 2) // 3)
    for letter, o in zip(LETTERS, options):
        d.text((30, y), f"{letter}. {o}", font=small, fill=(0, 0, 0))
        y += 34
    return page


def make_mmmu_pro_demo(out_dir, seed: int = SEED + 4) -> dict:
    """Write the three configs (12 questions each) under ``out_dir``; returns ``{"source", "counts"}``."""
    rng = random.Random(seed)
    out = Path(out_dir)
    kinds = ("word", "value", "images", "word", "value", "word")
    std4, std10, vision = [], [], []
    for i in range(12):
        subject = SUBJECTS[i % len(SUBJECTS)]
        row = _row(rng, kinds[i % len(kinds)], f"test_{subject}_{i + 1}", subject)
        if "_opts4" in row:  # image options: the same four in both standard settings
            o4, a4 = row.pop("_opts4"), row.pop("_ans4")
            o10, a10 = o4, a4
        else:
            o10, a10 = row.pop("_ten"), row.pop("_ans")
            o4, a4 = _four(rng, o10, a10)
        std10.append({**row, "options": repr(o10), "answer": a10})
        std4.append({**row, "options": repr(o4), "answer": a4})
        shown = [row[f"image_{k}"] for k in range(1, 8) if row[f"image_{k}"] is not None]
        vision.append({"id": row["id"], "subject": subject, "options": repr(o10), "answer": a10,
                       "image": _screenshot(row["question"].replace("<image 1> ", ""), o10, shown)})
    for config, rows, cols, img_cols in (
        ("standard (4 options)", std4, STANDARD_COLUMNS, [f"image_{k}" for k in range(1, 8)]),
        ("standard (10 options)", std10, STANDARD_COLUMNS, [f"image_{k}" for k in range(1, 8)]),
        ("vision", vision, VISION_COLUMNS, ["image"]),
    ):
        write_hf_parquet(out / config / "test-00000-of-00001.parquet", rows, cols, img_cols)
    return {"source": str(out), "configs": ["standard (4 options)", "standard (10 options)", "vision"],
            "counts": {"standard (4 options)": len(std4), "standard (10 options)": len(std10), "vision": len(vision)}}


README = """
## MMMU-Pro (`mmmu-pro/`)

The hub layout of `MMMU/MMMU_Pro`: `standard (4 options)/`, `standard (10 options)/` and `vision/`, each
`test-00000-of-00001.parquet`, 12 questions in 6 subjects, the same ids in every config. Standard rows carry
`id, question, options` (a Python-list string, up to 10 entries A-J), `explanation, image_1..image_7,
img_type, answer, topic_difficulty, subject`; vision rows `id, image, options, answer, subject`, the image a
screenshot of question and options. Questions ask for a word or a value drawn in large text; two have
images as options with their `<image k>` placeholders shuffled.
"""
