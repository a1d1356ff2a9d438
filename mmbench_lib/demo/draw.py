"""Shared drawing and writing helpers of the demo builders: fonts, shapes, text images, files, parquet."""
from __future__ import annotations

import io
import json
import math
import random
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

SEED = 20240601
SIZE = 224
BG = (245, 245, 240)
INK = (30, 30, 30)
COLOURS = {
    "red": (220, 40, 40), "green": (40, 160, 60), "blue": (40, 90, 220),
    "yellow": (235, 195, 30), "purple": (140, 60, 180), "orange": (245, 130, 30),
}
SHAPES = ("circle", "square", "triangle", "star", "diamond")
NUMBERS = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine")
WORDS = ("APPLE", "RIVER", "CLOUD", "TIGER", "PIANO", "LEMON", "ROBOT", "TRAIN", "HOUSE", "MUSIC", "PLANT", "SUGAR")
LETTERS = "ABCD"
WHITE = (255, 255, 255)


def load_font(size: int):
    """A scalable font: Pillow's built-in one (Pillow >= 10.1), else DejaVu, else the bitmap default."""
    try:
        return ImageFont.load_default(size=size)
    except TypeError:
        pass
    for path in ("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", "DejaVuSans-Bold.ttf"):
        try:
            return ImageFont.truetype(path, size)
        except OSError:
            continue
    return ImageFont.load_default()


def canvas(size: int = SIZE, bg=BG) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    img = Image.new("RGB", (size, size), bg)
    return img, ImageDraw.Draw(img)


def draw_shape(d: ImageDraw.ImageDraw, kind: str, cx: float, cy: float, r: float, fill) -> None:
    """Draw one filled shape of radius ``r`` centred on (cx, cy)."""
    if kind == "circle":
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill, outline=INK, width=2)
    elif kind == "square":
        d.rectangle((cx - r, cy - r, cx + r, cy + r), fill=fill, outline=INK, width=2)
    elif kind == "triangle":
        d.polygon([(cx, cy - r), (cx + r, cy + r), (cx - r, cy + r)], fill=fill, outline=INK, width=2)
    elif kind == "diamond":
        d.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=fill, outline=INK, width=2)
    elif kind == "star":
        pts = []
        for i in range(10):
            a = -math.pi / 2 + i * math.pi / 5
            rr = r if i % 2 == 0 else r * 0.45
            pts.append((round(cx + rr * math.cos(a), 2), round(cy + rr * math.sin(a), 2)))
        d.polygon(pts, fill=fill, outline=INK, width=2)
    else:
        raise ValueError(kind)


def draw_text(d: ImageDraw.ImageDraw, cx: float, cy: float, text: str, size: int, fill=INK) -> None:
    d.text((cx, cy), text, font=load_font(size), fill=fill, anchor="mm")


def grid_cells(rng: random.Random, n: int, grid: int = 4, size: int = SIZE, jitter: int = 4) -> list[tuple[int, int]]:
    """Centres of ``n`` distinct cells of a ``grid`` x ``grid`` layout, slightly jittered."""
    cell = size // grid
    picks = rng.sample(range(grid * grid), n)
    return [
        (cell * (p % grid) + cell // 2 + rng.randint(-jitter, jitter), cell * (p // grid) + cell // 2 + rng.randint(-jitter, jitter))
        for p in picks
    ]


def pick_options(rng: random.Random, correct: str, pool, n: int = 4) -> tuple[list[str], str]:
    """``n`` choices (the right one and others from ``pool``) in random order; returns (choices, letter)."""
    others = [p for p in dict.fromkeys(pool) if p != correct]
    opts = [correct] + rng.sample(others, n - 1)
    rng.shuffle(opts)
    return opts, "ABCDEFGHI"[opts.index(correct)]


def move_gold(options: list, gold: str, letter: str) -> tuple[list, str]:
    """``options`` with the gold option swapped into position ``letter`` (no randomness: the demo's
    images and values stay what its seeded draws made them)."""
    opts = list(options)
    i, j = "ABCDEFGHI".index(gold), "ABCDEFGHI".index(letter)
    opts[i], opts[j] = opts[j], opts[i]
    return opts, letter


def spread_golds(golds: list[str | None], n_options: list[int], offset: int = 0, fixed=()) -> list[str | None]:
    """A gold letter per multiple-choice question of one subject, all different where the option
    counts allow (``None`` keeps a question as it is: not multiple choice, or its gold in ``fixed``
    positions), starting the rotation at ``offset``. The Frequent Choice baseline (the most frequent gold
    of the subject) is then right on one question of the subject, as on a real, balanced benchmark."""
    taken = {g for g, f in zip(golds, fixed) if f and g}
    out = []
    for g, n, f in zip(golds, n_options, list(fixed) + [False] * (len(golds) - len(fixed))):
        if g is None or f:
            out.append(g)
            continue
        free = [("ABCDEFGHI"[(offset + k) % n]) for k in range(n)]
        letter = next((x for x in free if x not in taken), g)
        taken.add(letter)
        out.append(letter)
    return out


def save_image(img: Image.Image, path: Path) -> None:
    """PNG for ``.png``; JPEG (quality 95) otherwise, including CC3M's extension-less names."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".png":
        img.save(path, format="PNG")
    else:
        img.save(path, format="JPEG", quality=95)


def unique_name(rng: random.Random, used: set, make) -> str:
    """A fresh ``make(rng)`` value, not yet in ``used`` (which it joins)."""
    while True:
        value = make(rng)
        if value not in used:
            used.add(value)
            return value


def write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def text_image(lines, font, size=(360, 150)) -> Image.Image:
    """Black text lines, centred, on white: OCR-friendly."""
    img = Image.new("RGB", size, WHITE)
    d = ImageDraw.Draw(img)
    step = size[1] / (len(lines) + 1)
    for i, line in enumerate(lines, start=1):
        d.text((size[0] / 2, step * i), line, font=font, fill=(0, 0, 0), anchor="mm")
    return img


def labelled_bars(labels, values, font, value_font) -> Image.Image:
    """A horizontal bar chart: one row per bar, label left, value right of the bar (OCR reads rows)."""
    row, left = 80, 150
    img = Image.new("RGB", (600, row * len(labels) + 40), WHITE)
    d = ImageDraw.Draw(img)
    d.line((left, 10, left, img.height - 10), fill=(0, 0, 0), width=3)
    top = max(values)
    for i, (label, v) in enumerate(zip(labels, values)):
        cy = 20 + row * i + row // 2
        d.text((left - 20, cy), label, font=font, fill=(0, 0, 0), anchor="rm")
        x1 = left + int(300 * v / top)
        d.rectangle((left, cy - 22, x1, cy + 22), fill=(70, 120, 210))
        d.text((x1 + 20, cy), str(v), font=value_font, fill=(0, 0, 0), anchor="lm")
    return img


def write_hf_parquet(path: Path, rows: list[dict], columns, image_columns, int_columns=()) -> None:
    """Write rows as the hub does: image cells are ``{"bytes", "path"}`` structs and the
    ``huggingface`` schema metadata declares them as ``Image`` features (datasets decodes them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    image_type = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    fields, features = [], {}
    for col in columns:
        if col in image_columns:
            fields.append(pa.field(col, image_type))
            features[col] = {"_type": "Image"}
        elif col in int_columns:
            fields.append(pa.field(col, pa.int64()))
            features[col] = {"dtype": "int64", "_type": "Value"}
        else:
            fields.append(pa.field(col, pa.string()))
            features[col] = {"dtype": "string", "_type": "Value"}
    meta = {b"huggingface": json.dumps({"info": {"features": features}}).encode()}
    data = {}
    for col in columns:
        values = []
        for r in rows:
            v = r.get(col)
            if col in image_columns and v is not None:
                v = {"bytes": png_bytes(v) if isinstance(v, Image.Image) else v, "path": None}
            values.append(v)
        data[col] = values
    table = pa.Table.from_pydict(data, schema=pa.schema(fields, metadata=meta))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
