"""MMBench demo in VLMEvalKit's layout and the hub's: ``MMBench_DEV_EN.tsv`` (each question with its circular
copies at ``index + k * 1e6``, options shifted and the answer moved with them, the copies' ``image`` cell the main
row's index) and ``hub/en/dev-00000-of-00001.parquet`` (the same rows, images inlined, ``L2-category``).

Twelve questions over seven categories of all six L2 abilities; three have fewer than four options and two carry
a hint. Every answer is read off the drawn pixels (a word, a colour, a position, a bar, a count of shapes).
"""
from __future__ import annotations

import base64
import random
from collections import deque
from pathlib import Path

from PIL import Image, ImageDraw

from mmbench_lib.demo.draw import COLOURS, SEED, WORDS, canvas, draw_shape, draw_text, labelled_bars, load_font, \
    pick_options, png_bytes, write_hf_parquet

OFFSET = 1_000_000
TSV_COLUMNS = ("index", "question", "hint", "A", "B", "C", "D", "answer", "category", "l2-category", "split", "image")
HUB_COLUMNS = ("index", "question", "hint", "answer", "A", "B", "C", "D", "category", "image", "source", "L2-category",
               "comment", "split")
L2 = {"ocr": "finegrained_perception (instance-level)", "object_localization": "finegrained_perception (instance-level)",
      "attribute_recognition": "finegrained_perception (instance-level)",
      "spatial_relationship": "finegrained_perception (cross-instance)",
      "attribute_comparison": "finegrained_perception (cross-instance)", "image_topic": "coarse_perception",
      "structuralized_imagetext_understanding": "logic_reasoning", "physical_relation": "relation_reasoning",
      "physical_property_reasoning": "attribute_reasoning"}
CORNERS = {"top left": (56, 56), "top right": (168, 56), "bottom left": (56, 168), "bottom right": (168, 168)}


def _ocr(rng):
    img, d = canvas()
    word = rng.choice(WORDS)
    draw_text(d, 112, 112, word, 40)
    opts, ans = pick_options(rng, word.lower(), [w.lower() for w in WORDS])
    return img, "Which word is written in the image?", None, opts, ans


def _where(rng):
    img, d = canvas()
    corner = rng.choice(list(CORNERS))
    draw_shape(d, "circle", *CORNERS[corner], 30, COLOURS["red"])
    opts, ans = pick_options(rng, corner, list(CORNERS))
    return img, "Where is the red circle?", None, opts, ans


def _colour(rng):
    img, d = canvas()
    colour = rng.choice(list(COLOURS))
    draw_shape(d, "square", 112, 112, 60, COLOURS[colour])
    opts, ans = pick_options(rng, colour, list(COLOURS))
    return img, "What colour is the square?", None, opts, ans


def _left_of(rng):
    img, d = canvas()
    shapes = rng.sample(("circle", "triangle", "star", "diamond"), 2)
    draw_shape(d, shapes[0], 56, 112, 34, COLOURS["blue"])
    draw_shape(d, shapes[1], 168, 112, 34, COLOURS["green"])
    opts, ans = pick_options(rng, shapes[0], ("circle", "triangle", "star", "diamond"), 3)
    return img, f"Which shape is to the left of the {shapes[1]}?", None, opts, ans


def _bigger(rng):
    img, d = canvas()
    big, small = rng.sample(("circle", "square"), 2)
    draw_shape(d, big, 70, 112, 50, COLOURS["orange"])
    draw_shape(d, small, 180, 112, 18, COLOURS["purple"])
    opts, ans = pick_options(rng, f"the {big}", ("the circle", "the square"), 2)
    return img, "Which shape is larger?", None, opts, ans


def _topic(rng):
    kind = rng.choice(("a bar chart", "a word"))
    if kind == "a bar chart":
        img = labelled_bars(["P", "Q", "R"], rng.sample(range(2, 9), 3), load_font(30), load_font(24))
    else:
        img, d = canvas()
        draw_text(d, 112, 112, rng.choice(WORDS), 40)
    opts, ans = pick_options(rng, kind, ("a bar chart", "a word", "a map"), 3)
    return img, "What does the image show?", None, opts, ans


def _chart(rng):
    labels = rng.sample(("P", "Q", "R", "S", "T"), 4)
    values = rng.sample(range(2, 10), 4)
    img = labelled_bars(labels, values, load_font(40), load_font(40))
    opts, ans = pick_options(rng, labels[values.index(max(values))], labels)
    return img, "Which product sold the most?", "The chart shows how many units of four products were sold.", opts, ans


def _on_top(rng):
    img = Image.new("RGB", (224, 224), (245, 245, 240))
    d = ImageDraw.Draw(img)
    shape = rng.choice(("circle", "triangle", "star"))
    d.rectangle((40, 150, 184, 200), fill=(120, 80, 40))
    draw_shape(d, shape, 112, 110, 36, COLOURS["blue"])
    opts, ans = pick_options(rng, shape, ("circle", "triangle", "star", "diamond"))
    return img, "Which shape stands on the brown table?", "Look at the object above the table.", opts, ans


def _count(rng):
    img, d = canvas()
    n = rng.randint(2, 5)
    for k in range(n):
        draw_shape(d, "circle", 30 + 40 * k, 112, 16, COLOURS["green"])
    opts, ans = pick_options(rng, str(n), [str(x) for x in range(1, 8)])
    return img, "How many green circles are there?", None, opts, ans


QUESTIONS = (("ocr", _ocr), ("ocr", _ocr), ("object_localization", _where), ("object_localization", _where),
             ("attribute_recognition", _colour), ("spatial_relationship", _left_of), ("attribute_comparison", _bigger),
             ("image_topic", _topic), ("structuralized_imagetext_understanding", _chart),
             ("structuralized_imagetext_understanding", _chart), ("physical_relation", _on_top),
             ("physical_property_reasoning", _count))


def circular_rows(row: dict) -> list[dict]:
    """``row`` and its copies as VLMEvalKit's ``vlmutil circular`` writes them (tools.py ``CIRCULAR`` at e8e78f05):
    pass k at ``index + k * 1e6``, the options ``deque.rotate(1)`` once more per pass, the answer moved with them."""
    letters = [L for L in "ABCD" if row.get(L) is not None]
    out = [row]
    opts = deque(row[L] for L in letters)
    gold = row[row["answer"]]
    for k in range(1, len(letters)):
        opts.rotate(1)
        shifted = dict(zip(letters, opts))
        out.append({**row, "index": row["index"] + k * OFFSET, **shifted,
                    "answer": next(L for L, t in shifted.items() if t == gold)})
    return out


def make_mmbench_demo(out_dir, seed: int = SEED + 7) -> dict:
    """Write the TSV and the hub parquet; returns ``{annotation_file, parquet, count}``."""
    rng = random.Random(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tsv, hub = [], []
    for i, (category, make) in enumerate(QUESTIONS):
        img, question, hint, opts, ans = make(rng)
        row = {"index": i, "question": question, "hint": hint, **dict(zip("ABCD", opts)), "answer": ans,
               "category": category, "l2-category": L2[category], "split": "dev"}
        data = png_bytes(img)
        for k, r in enumerate(circular_rows(row)):
            tsv.append({**r, "image": base64.b64encode(data).decode("ascii") if k == 0 else str(i)})
            hub.append({**{c: r.get(c) for c in HUB_COLUMNS if c not in ("L2-category", "image")},
                        "L2-category": r["l2-category"], "image": data, "source": "demo"})
    ann = out / "MMBench_DEV_EN.tsv"
    _write_tsv(ann, tsv)
    hub_file = out / "hub" / "en" / "dev-00000-of-00001.parquet"
    hub_file.parent.mkdir(parents=True, exist_ok=True)
    write_hf_parquet(hub_file, hub, HUB_COLUMNS, ["image"], int_columns=["index"])
    return {"annotation_file": str(ann), "parquet": str(out / "hub"), "count": len(QUESTIONS)}


def _write_tsv(path: Path, rows: list[dict]) -> None:
    """Tab-separated as pandas writes VLMEvalKit's files: an empty cell for a missing option or hint."""
    import csv

    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(TSV_COLUMNS)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r[c] for c in TSV_COLUMNS])


README = """
## MMBench (`mmbench/`)

VLMEvalKit's layout: `MMBench_DEV_EN.tsv` (`index`, `question`, `hint`, `A`-`D`, `answer`, `category`,
`l2-category`, `split`, base64 `image`), each question followed by its circular copies at `index + k*1e6`
(options shifted, answer moved, `image` the main row's index); `hub/en/dev-00000-of-00001.parquet` is the hub
copy (`lmms-lab/MMBench` layout, images inlined). 12 questions over 9 categories of all six L2 abilities,
three with two or three options, two with a hint.
"""
