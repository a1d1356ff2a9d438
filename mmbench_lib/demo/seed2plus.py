"""SEED-Bench-2-Plus demo in the official layout: ``SEED-Bench-2-plus-text-rich.json`` with images
``text_rich/<n>.png`` beside it, and a parquet copy (images inlined) in ``parquet/``.

Four questions per category (Charts, Maps, Webs), two data types each; every answer is text in the image.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from PIL import Image, ImageDraw

from mmbench_lib.demo.draw import SEED, WHITE, WORDS, labelled_bars, load_font, write_hf_parquet

CITIES = ("Avalon", "Brixton", "Cedar", "Dunmore", "Elmwood", "Fairview", "Glenrock", "Harbor")
PRODUCTS = ("Lamp", "Kettle", "Backpack", "Headphones", "Blender", "Notebook")
COLUMNS = ("question_id", "question", "choice_A", "choice_B", "choice_C", "choice_D", "answer", "data_id",
           "question_image_type", "question_image_subtype", "data_source", "data_type", "level", "subpart", "version",
           "image")


def _options(rng, gold, pool):
    others = [p for p in dict.fromkeys(pool) if p != gold]
    opts = [gold] + rng.sample(others, 3)
    rng.shuffle(opts)
    return opts, "ABCD"[opts.index(gold)]


def _chart(rng, subtype):
    font = load_font(40)
    labels = rng.sample(("P", "Q", "R", "S", "T", "U"), 4)
    values = rng.sample(range(2, 10), 4)
    img = labelled_bars(labels, values, font, font)
    if subtype == "bar chart":
        opts, ans = _options(rng, labels[values.index(max(values))], labels)
        return img, "Which bar has the largest value?", opts, ans
    k = rng.randrange(4)
    opts, ans = _options(rng, str(values[k]), [str(v) for v in range(1, 12)])
    return img, f"What is the value of bar {labels[k]}?", opts, ans


def _map(rng, subtype):
    font = load_font(30)
    img = Image.new("RGB", (600, 600), WHITE)
    d = ImageDraw.Draw(img)
    names = rng.sample(CITIES, 4)
    spots = [(150, 150), (450, 150), (150, 450), (450, 450)]
    for (x, y), name in zip(spots, names):
        d.ellipse((x - 12, y - 12, x + 12, y + 12), fill=(200, 40, 40))
        d.text((x, y + 40), name, font=font, fill=(0, 0, 0), anchor="mm")
    d.text((300, 30), "N ^", font=font, fill=(0, 0, 0), anchor="mm")
    if subtype == "road map":
        d.line((150, 150, 450, 450), fill=(60, 60, 60), width=6)
        opts, ans = _options(rng, names[3], CITIES)
        return img, f"Which town does the road from {names[0]} lead to?", opts, ans
    opts, ans = _options(rng, names[1], CITIES)
    return img, f"Which town lies east of {names[0]}?", opts, ans


def _web(rng, subtype):
    big, small = load_font(40), load_font(30)
    img = Image.new("RGB", (600, 400), WHITE)
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, 600, 70), fill=(40, 90, 220))
    product, price = rng.choice(PRODUCTS), rng.randint(11, 99)
    site = rng.choice(WORDS).capitalize()
    d.text((20, 35), f"{site} Shop", font=big, fill=WHITE, anchor="lm")
    d.text((40, 160), product, font=big, fill=(0, 0, 0), anchor="lm")
    d.text((40, 240), f"Price: ${price}", font=small, fill=(0, 0, 0), anchor="lm")
    if subtype == "shopping page":
        opts, ans = _options(rng, f"${price}", [f"${p}" for p in range(price - 5, price + 6)])
        return img, f"What is the price of the {product.lower()}?", opts, ans
    opts, ans = _options(rng, f"{site} Shop", [f"{w.capitalize()} Shop" for w in WORDS])
    return img, "What is the name of the website?", opts, ans


CATEGORIES = {"chart": (_chart, ("bar chart", "value chart")), "map": (_map, ("road map", "town map")),
              "web": (_web, ("shopping page", "brand page"))}


def make_seed2plus_demo(out_dir, seed: int = SEED + 5) -> dict:
    """Write the JSON, the images and the parquet copy; returns ``{annotation_file, image_root, parquet}``."""
    rng = random.Random(seed)
    out = Path(out_dir)
    (out / "text_rich").mkdir(parents=True, exist_ok=True)
    rows, images = [], []
    n = 0
    for cat, (make, subtypes) in CATEGORIES.items():
        for k in range(4):
            subtype = subtypes[k % 2]
            img, question, opts, ans = make(rng, subtype)
            n += 1
            data_id = f"text_rich/{n}.png"
            img.save(out / data_id, format="PNG")
            rows.append({"question_id": str(n - 1), "question": question, **{f"choice_{L}": o for L, o in zip("ABCD", opts)},
                         "answer": ans, "data_id": data_id, "question_image_type": cat, "question_image_subtype": subtype,
                         "data_source": "SEED-Bench v2 plus", "data_type": "Single Image", "level": "L1",
                         "subpart": "Single-Image & Text Comprehension", "version": "v2+"})
            images.append(img)
    ann = out / "SEED-Bench-2-plus-text-rich.json"
    ann.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    write_hf_parquet(out / "parquet" / "test-00000-of-00001.parquet",
                     [{**r, "image": im} for r, im in zip(rows, images)], COLUMNS, ["image"])
    return {"annotation_file": str(ann), "image_root": str(out), "parquet": str(out / "parquet"), "count": len(rows)}


README = """
## SEED-Bench-2-Plus (`seed2plus/`)

The official layout: `SEED-Bench-2-plus-text-rich.json` (a list of questions with `choice_A`..`choice_D`,
`answer`, `data_id` = `text_rich/<n>.png`, `question_image_type` chart/map/web, `question_image_subtype`)
and the images under `text_rich/`; `parquet/test-00000-of-00001.parquet` is the same rows with the image
inlined. 12 questions, 4 per category, 2 data types each: bar charts, maps with towns, shop pages.
"""
