"""MMBench demo in VLMEvalKit's layout and the hub's: ``MMBench_DEV_EN.tsv`` (each question with its circular
copies at ``index + k * 1e6``, options shifted and the answer moved with them, the copies' ``image`` cell the main
row's index) and ``hub/en/dev-00000-of-00001.parquet`` (the same rows, images inlined, ``L2-category``).

Twenty-two questions, every one of the twenty categories (so every L2 ability and Overall is reported); some have
two or three options and three carry a hint. Every answer is read off the drawn pixels (a word, a colour, a position, a bar, a count of shapes).
"""
from __future__ import annotations

import base64
import random
from collections import deque
from pathlib import Path

from PIL import Image, ImageDraw

from mmbench_lib.demo.draw import COLOURS, SEED, WHITE, WORDS, canvas, draw_shape, draw_text, labelled_bars, load_font, \
    move_gold, pick_options, png_bytes, write_hf_parquet

OFFSET = 1_000_000
TSV_COLUMNS = ("index", "question", "hint", "A", "B", "C", "D", "answer", "category", "l2-category", "split", "image")
HUB_COLUMNS = ("index", "question", "hint", "answer", "A", "B", "C", "D", "category", "image", "source", "L2-category",
               "comment", "split")
L2 = {leaf: l2 for l2, leaves in (
    ("coarse_perception", ("image_style", "image_scene", "image_emotion", "image_quality", "image_topic")),
    ("finegrained_perception (instance-level)", ("object_localization", "attribute_recognition", "celebrity_recognition",
                                                 "ocr")),
    ("finegrained_perception (cross-instance)", ("spatial_relationship", "attribute_comparison", "action_recognition")),
    ("attribute_reasoning", ("physical_property_reasoning", "function_reasoning", "identity_reasoning")),
    ("relation_reasoning", ("social_relation", "physical_relation", "nature_relation")),
    ("logic_reasoning", ("structuralized_imagetext_understanding", "future_prediction"))) for leaf in leaves}
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


def _face(rng):
    img, d = canvas()
    mood = rng.choice(("happy", "sad", "neutral"))
    d.ellipse((42, 42, 182, 182), fill=COLOURS["yellow"], outline=(30, 30, 30), width=3)
    d.ellipse((80, 85, 94, 99), fill=(30, 30, 30))
    d.ellipse((130, 85, 144, 99), fill=(30, 30, 30))
    if mood == "happy":
        d.arc((75, 100, 149, 155), 20, 160, fill=(30, 30, 30), width=5)
    elif mood == "sad":
        d.arc((75, 130, 149, 185), 200, 340, fill=(30, 30, 30), width=5)
    else:
        d.line((80, 145, 144, 145), fill=(30, 30, 30), width=5)
    opts, ans = pick_options(rng, mood, ("happy", "sad", "neutral"), 3)
    return img, "How does the face feel?", None, opts, ans


def _quality(rng):
    from PIL import ImageFilter

    img, d = canvas()
    draw_text(d, 112, 112, rng.choice(WORDS), 40)
    blurred = rng.random() < 0.5
    if blurred:
        img = img.filter(ImageFilter.GaussianBlur(6))
    opts, ans = pick_options(rng, "blurry" if blurred else "sharp", ("blurry", "sharp"), 2)
    return img, "Is the image sharp or blurry?", None, opts, ans


def _scene(rng):
    night = rng.random() < 0.5
    img, d = canvas(bg=(20, 20, 60) if night else (150, 200, 250))
    draw_shape(d, "circle", 170, 50, 22, (240, 240, 200) if night else COLOURS["yellow"])
    d.rectangle((0, 180, 224, 224), fill=(40, 120, 50))
    opts, ans = pick_options(rng, "at night" if night else "in the daytime",
                             ("at night", "in the daytime", "under water", "in a cave"))
    return img, "When is this scene?", None, opts, ans


def _arrow(question):
    def make(rng):
        img, d = canvas()
        way = rng.choice(("left", "right", "up", "down"))
        tip = {"left": (40, 112), "right": (184, 112), "up": (112, 40), "down": (112, 184)}[way]
        d.line((112, 112, *tip), fill=(30, 30, 30), width=8)
        x, y = tip
        head = {"left": [(x, y), (x + 30, y - 20), (x + 30, y + 20)], "right": [(x, y), (x - 30, y - 20), (x - 30, y + 20)],
                "up": [(x, y), (x - 20, y + 30), (x + 20, y + 30)], "down": [(x, y), (x - 20, y - 30), (x + 20, y - 30)]}[way]
        d.polygon(head, fill=(30, 30, 30))
        draw_shape(d, "circle", 112, 112, 14, COLOURS["red"])
        opts, ans = pick_options(rng, way, ("left", "right", "up", "down"))
        return img, question, None, opts, ans
    return make


def _name(question, hint=None):
    names = ("Alice", "Bruno", "Chloe", "Dmitri", "Elena", "Farid")

    def make(rng):
        img, d = canvas()
        name = rng.choice(names)
        d.rectangle((30, 80, 194, 144), fill=WHITE, outline=(30, 30, 30), width=3)
        draw_text(d, 112, 112, name, 34)
        opts, ans = pick_options(rng, name, names)
        return img, question, hint, opts, ans
    return make


#: one question per category (all twenty, so every L2 ability and Overall are reported), two more for OCR and charts
QUESTIONS = (("image_style", _topic), ("image_scene", _scene), ("image_emotion", _face), ("image_quality", _quality),
             ("image_topic", _topic), ("object_localization", _where), ("attribute_recognition", _colour),
             ("celebrity_recognition", _name("Whose name is on the card?")), ("ocr", _ocr), ("ocr", _ocr),
             ("spatial_relationship", _left_of), ("attribute_comparison", _bigger),
             ("action_recognition", _arrow("Which way is the arrow pointing?")),
             ("physical_property_reasoning", _count), ("function_reasoning", _colour),
             ("identity_reasoning", _name("Who is the guest?", "The guest wears the name card in the image.")),
             ("social_relation", _left_of), ("physical_relation", _on_top), ("nature_relation", _where),
             ("structuralized_imagetext_understanding", _chart), ("structuralized_imagetext_understanding", _chart),
             ("future_prediction", _arrow("Which way will the red ball roll next?")))


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
        opts, ans = move_gold(opts, ans, "ABCD"[i % len(opts)])  # gold letters spread over the positions
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


TEST_FILE = "MMBench_TEST_EN.tsv"


def make_test_copy(annotation_file, out_dir=None) -> str:
    """The demo TSV as a test split: ``MMBench_TEST_EN.tsv`` beside it (or in ``out_dir``), the same rows with no
    ``answer`` column and ``split`` ``test``, as VLMEvalKit's test TSVs have it (docs/en/Development.md, Table 1, at
    open-compass/VLMEvalKit@e8e78f05). ``make-demo`` does not write it; a test or a user of
    ``params/52_circular_eval/mmb_test_split_smollm2.yaml`` does. Returns its path."""
    import csv

    src = Path(annotation_file)
    with open(src, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    columns = [c for c in TSV_COLUMNS if c != "answer"]
    out = (Path(out_dir) if out_dir is not None else src.parent) / TEST_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([{**r, "split": "test"}[c] for c in columns])
    return str(out)


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
copy (`lmms-lab/MMBench` layout, images inlined). 22 questions covering all 20 categories, some with two or
three options, three with a hint.
"""
