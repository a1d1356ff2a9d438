"""MMStar demo in the hub layout (``mmstar.parquet``: ``index``, ``question`` with the options inline, ``image``
inlined, ``answer``, ``category``, ``l2_category``, ``meta_info``) and VLMEvalKit's ``MMStar.tsv`` (base64
image, ``bench`` column; :func:`write_tsv`, called by ``demo/copies.py``).

One question per axis (18, three per core capability), each answer readable from the drawn pixels: shapes, colours,
counts, positions, a face, a word, a diagram arrow, a number sequence, a sum, a formula, a battery, a bar chart. One question uses MathVista's
``Choices:\\n(A) ...`` form and one has three options (the fourth printed ``nan``), as in the release.
"""
from __future__ import annotations

import random
from pathlib import Path

from PIL import Image, ImageDraw

from mmbench_lib.demo.draw import (COLOURS, SEED, SHAPES, WHITE, WORDS, canvas, draw_shape, draw_text, grid_cells,
                                   labelled_bars, load_font, pick_options, write_hf_parquet)

COLUMNS = ("index", "question", "image", "answer", "category", "l2_category", "meta_info")
TSV_COLUMNS = ("index", "question", "answer", "category", "l2_category", "bench", "image")
MATHVISTA_HINT = "Hint: Please answer the question and provide the correct option letter, e.g., A, B, C, D, at the end."


def _scene(rng):
    kind, colour = rng.choice(SHAPES), rng.choice(list(COLOURS))
    img, d = canvas()
    draw_shape(d, kind, 112, 112, 70, COLOURS[colour])
    opts, ans = pick_options(rng, kind, SHAPES)
    return img, "What is the main object shown in the image?", opts, ans


def _background(rng):
    colour = rng.choice(list(COLOURS))
    img = Image.new("RGB", (224, 224), COLOURS[colour])
    opts, ans = pick_options(rng, colour, COLOURS)
    return img, "What is the background colour of the image?", opts, ans


def _count(rng):
    n = rng.randint(2, 7)
    img, d = canvas()
    for cx, cy in grid_cells(rng, n):
        draw_shape(d, "circle", cx, cy, 18, COLOURS["blue"])
    opts, ans = pick_options(rng, str(n), [str(k) for k in range(1, 10)])
    return img, "How many circles are there in the image?", opts, ans


def _where(rng):
    spots = {"top left": (56, 56), "top right": (168, 56), "bottom left": (56, 168), "bottom right": (168, 168)}
    place = rng.choice(list(spots))
    img, d = canvas()
    draw_shape(d, "star", *spots[place], 40, COLOURS["orange"])
    opts, ans = pick_options(rng, place, spots)
    return img, "Where is the star in the image?", opts, ans


def _colour_of(rng):
    colour = rng.choice(list(COLOURS))
    img, d = canvas()
    draw_shape(d, "triangle", 112, 112, 70, COLOURS[colour])
    opts, ans = pick_options(rng, colour, COLOURS)
    return img, "What colour is the triangle?", opts, ans


def _left_of(rng):
    left, right = rng.sample([s for s in SHAPES if s != "square"], 1)[0], "square"
    img, d = canvas()
    draw_shape(d, left, 60, 112, 40, COLOURS["green"])
    draw_shape(d, right, 164, 112, 40, COLOURS["purple"])
    opts, ans = pick_options(rng, left, [s for s in SHAPES if s != "square"])
    return img, "Which shape is to the left of the square?", opts, ans


def _sequence(rng):
    start, step = rng.randint(1, 9), rng.randint(2, 5)
    seq = [start + step * k for k in range(4)]
    img = Image.new("RGB", (360, 120), WHITE)
    draw_text(ImageDraw.Draw(img), 180, 60, ", ".join(map(str, seq)) + ", ?", 40)
    nxt = start + step * 4
    opts, ans = pick_options(rng, str(nxt), [str(nxt + k) for k in (-3, -2, -1, 1, 2, 3)])
    return img, "Which number comes next in the sequence?", opts, ans


def _bigger(rng):
    a, b = rng.sample(range(11, 99), 2)
    img = Image.new("RGB", (360, 120), WHITE)
    d = ImageDraw.Draw(img)
    draw_text(d, 90, 60, str(a), 44)
    draw_text(d, 270, 60, str(b), 44)
    opts = ["the left one", "the right one", "they are equal"]
    return img, "Which of the two numbers is larger?", opts, "A" if a > b else "B"


def _formula(rng):
    formula = rng.choice(("H2O", "CO2", "NaCl", "O2", "CH4", "NH3"))
    img = Image.new("RGB", (360, 120), WHITE)
    draw_text(ImageDraw.Draw(img), 180, 60, formula, 48)
    opts, ans = pick_options(rng, formula, ("H2O", "CO2", "NaCl", "O2", "CH4", "NH3"))
    return img, "Which chemical formula is written in the image?", opts, ans


def _compass(rng):
    side = rng.choice(("north", "south", "east", "west"))
    pos = {"north": (112, 30), "south": (112, 194), "east": (194, 112), "west": (30, 112)}[side]
    img, d = canvas()
    d.ellipse((92, 92, 132, 132), fill=COLOURS["green"])
    draw_shape(d, "circle", *pos, 16, COLOURS["red"])
    draw_text(d, 112, 12, "N", 18)
    opts, ans = pick_options(rng, side, ("north", "south", "east", "west"))
    return img, "The map's top is north. On which side of the green field is the red well?", opts, ans


def _sides(rng):
    kind = rng.choice(("triangle", "square"))
    img, d = canvas()
    draw_shape(d, kind, 112, 112, 70, COLOURS["yellow"])
    n = {"triangle": 3, "square": 4}[kind]
    opts, ans = pick_options(rng, str(n), ("3", "4", "5", "6"))
    return img, "How many sides does the shape in the image have?", opts, ans


def _tallest(rng):
    labels = rng.sample(("P", "Q", "R", "S", "T", "U"), 4)
    values = rng.sample(range(2, 10), 4)
    img = labelled_bars(labels, values, load_font(40), load_font(40))
    opts, ans = pick_options(rng, labels[values.index(max(values))], labels)
    return img, "Which bar has the largest value?", opts, ans


def _emotion(rng):
    mood = rng.choice(("happy", "sad"))
    img, d = canvas()
    d.ellipse((32, 32, 192, 192), fill=COLOURS["yellow"], outline=(30, 30, 30), width=3)
    d.ellipse((80, 85, 96, 101), fill=(30, 30, 30))
    d.ellipse((128, 85, 144, 101), fill=(30, 30, 30))
    if mood == "happy":  # the lower half of an ellipse: a smile
        d.arc((72, 110, 152, 170), 20, 160, fill=(30, 30, 30), width=5)
    else:  # the upper half: a frown
        d.arc((72, 140, 152, 200), 200, 340, fill=(30, 30, 30), width=5)
    opts, ans = pick_options(rng, mood, ("happy", "sad", "angry", "surprised"))
    return img, "Which emotion does the face in the image show?", opts, ans


def _word(rng):
    word = rng.choice(WORDS)
    img = Image.new("RGB", (360, 120), WHITE)
    draw_text(ImageDraw.Draw(img), 180, 60, word, 48)
    opts, ans = pick_options(rng, word.lower(), [w.lower() for w in WORDS])
    return img, "Which word is written in the image?", opts, ans


def _bigger_shape(rng):
    big = rng.choice(("left", "right"))
    img, d = canvas()
    r_left, r_right = (50, 22) if big == "left" else (22, 50)
    draw_shape(d, "circle", 60, 112, r_left, COLOURS["red"])
    draw_shape(d, "circle", 164, 112, r_right, COLOURS["blue"])
    colour = "red" if big == "left" else "blue"
    opts, ans = pick_options(rng, colour, ("red", "blue", "green", "yellow"))
    return img, "Of the two circles, which colour is the larger one?", opts, ans


def _arrow(rng):
    names = rng.sample(("P", "Q", "R", "S"), 3)
    target = rng.randrange(1, 3)
    img = Image.new("RGB", (360, 240), WHITE)
    d = ImageDraw.Draw(img)
    spots = [(60, 120), (300, 50), (300, 190)]
    for (x, y), n in zip(spots, names):
        d.rectangle((x - 30, y - 25, x + 30, y + 25), outline=(30, 30, 30), width=3)
        draw_text(d, x, y, n, 30)
    tx, ty = spots[target]
    d.line((92, 120, tx - 34, ty), fill=(200, 40, 40), width=5)
    d.polygon([(tx - 34, ty), (tx - 50, ty - 8), (tx - 50, ty + 8)], fill=(200, 40, 40))
    opts, ans = pick_options(rng, names[target], ("P", "Q", "R", "S"))
    return img, f"In the diagram, which box does the arrow from box {names[0]} point to?", opts, ans


def _battery(rng):
    volts = rng.choice(("1.5V", "3V", "9V", "12V"))
    img, d = canvas()
    d.rectangle((40, 80, 170, 144), outline=(30, 30, 30), width=4)
    d.rectangle((170, 100, 185, 124), fill=(30, 30, 30))
    draw_text(d, 105, 112, volts, 30)
    opts, ans = pick_options(rng, volts, ("1.5V", "3V", "9V", "12V"))
    return img, "What voltage is printed on the battery?", opts, ans


def _sum(rng):
    a, b = rng.randint(2, 9), rng.randint(2, 9)
    img = Image.new("RGB", (360, 120), WHITE)
    draw_text(ImageDraw.Draw(img), 180, 60, f"{a} + {b} = ?", 48)
    opts, ans = pick_options(rng, str(a + b), [str(a + b + k) for k in (-2, -1, 1, 2, 3)])
    return img, "What is the result of the sum shown in the image?", opts, ans


#: (capability, axis, source benchmark, maker, form): one question per axis, 3 per capability
QUESTIONS = (
    ("coarse perception", "image scene and topic", "SEEDBench_IMG", _scene, "inline"),
    ("coarse perception", "image style & quality", "MMBench", _background, "inline"),
    ("coarse perception", "image emotion", "MMBench", _emotion, "inline"),
    ("fine-grained perception", "object counting", "SEEDBench_IMG", _count, "inline"),
    ("fine-grained perception", "recognition", "SEEDBench_IMG", _word, "inline"),
    ("fine-grained perception", "localization", "MMBench", _where, "inline"),
    ("instance reasoning", "single-instance reasoning", "SEEDBench_IMG", _colour_of, "inline"),
    ("instance reasoning", "cross-instance attribute reasoning", "MMBench", _bigger_shape, "inline"),
    ("instance reasoning", "cross-instance relation reasoning", "MMBench", _left_of, "inline"),
    ("logical reasoning", "code & sequence reasoning", "MathVista", _sequence, "choices"),
    ("logical reasoning", "diagram reasoning", "AI2D_TEST", _arrow, "inline"),
    ("logical reasoning", "common reasoning", "MMMU", _bigger, "inline"),
    ("science & technology", "biology & chemistry & physics", "ScienceQA_TEST", _formula, "inline"),
    ("science & technology", "electronics & energy & mechanical eng.", "MMMU", _battery, "inline"),
    ("science & technology", "geography & earth science & agriculture", "AI2D_TEST", _compass, "inline"),
    ("math", "geometry", "MathVista", _sides, "inline"),
    ("math", "numeric commonsense and calculation", "MathVista", _sum, "choices"),
    ("math", "statistical reasoning", "MathVista", _tallest, "choices"),
)


def question_text(question: str, opts: list[str], form: str) -> str:
    """The question with its options inline, as the release writes them (four options; missing ones ``nan``)."""
    opts = list(opts) + ["nan"] * (4 - len(opts))
    if form == "choices":
        return f"{MATHVISTA_HINT}\nQuestion: {question}\nChoices:\n" + "\n".join(f"({L}) {o}" for L, o in zip("ABCD", opts))
    return f"{question}\nOptions: " + ", ".join(f"{L}: {o}" for L, o in zip("ABCD", opts))


def _rows(seed: int) -> tuple[list[dict], list[Image.Image]]:
    rng = random.Random(seed)
    rows, images = [], []
    for i, (cap, axis, bench, make, form) in enumerate(QUESTIONS):
        img, question, opts, ans = make(rng)
        rows.append({"index": i, "question": question_text(question, opts, form), "answer": ans, "category": cap,
                     "l2_category": axis, "bench": bench,
                     "meta_info": f'{{"source": "{bench}", "split": "demo", "image_path": "images/{i}.png"}}'})
        images.append(img)
    return rows, images


def make_mmstar_demo(out_dir, seed: int = SEED + 6) -> dict:
    """Write ``mmstar.parquet`` (the hub layout); returns ``{annotation_file, count}``."""
    out = Path(out_dir)
    rows, images = _rows(seed)
    path = out / "mmstar.parquet"
    write_hf_parquet(path, [{**r, "image": im} for r, im in zip(rows, images)], COLUMNS, ["image"], ["index"])
    return {"annotation_file": str(path), "count": len(rows)}


def write_tsv(paths: dict, out: Path) -> str:
    """The demo items as VLMEvalKit's ``MMStar.tsv`` (base64 PNG, ``bench`` column), read back from the parquet."""
    import base64
    import csv

    import pyarrow.parquet as pq

    rows = pq.read_table(paths["annotation_file"]).to_pylist()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    target = out / "MMStar.tsv"
    with open(target, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(TSV_COLUMNS)
        for r in rows:
            bench = r["meta_info"].split('"source": "')[1].split('"')[0]
            w.writerow([r["index"], r["question"], r["answer"], r["category"], r["l2_category"], bench,
                        base64.b64encode(r["image"]["bytes"]).decode("ascii")])
    return str(target)


README = """
## MMStar (`mmstar/`)

The hub layout: `mmstar.parquet` with `index`, `question` (the options inline, `Options: A: ..., B: ...`, or
MathVista's `Choices:` lines), `image` (inlined), `answer`, `category` (core capability), `l2_category` (axis)
and `meta_info`. 18 questions, one per axis (3 per core capability): shapes, colours, counts, positions, a face,
words, a diagram, a number sequence, a sum, a formula, a battery, a bar chart; one has three options (the fourth printed `nan`, as in the release).
"""
