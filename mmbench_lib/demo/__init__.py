"""Small, deterministic demo sets in the exact official SEED-Bench v1 and SEED-Bench-2 layouts.

Every image and video is drawn procedurally (Pillow, PyAV) from a seeded ``random.Random``,
so each question has a right answer that can be checked from the pixels: shapes to count,
colours, positions, rendered words, motion and colour cycles in short videos. The files follow
spec/protocols.md §1.1-1.3 (SEED-Bench.json, flat CC3M folder, SSv2 / Epic-Kitchens /
Breakfast video roots) and §2.1-2.2 (SEED-Bench_v2_level1_2_3.json, ``cc3m`` and
``SEED-Bench v2`` roots, ``<img>`` markers, option images for dims 25-27).

``make_demo(out_dir)`` writes every demo set and ``out_dir/README.md``;
``make_seed_demo(out_dir)`` writes only the SEED ones; ``make_mmmu_demo`` and
``make_cmmmu_demo`` the MMMU (hub parquet, §3.1) and CMMMU (official JSONL + HF parquet, §4.1) ones.
"""
from __future__ import annotations

import json
import math
import random
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from mmbench_lib.tasks import seed1, seed2
from mmbench_lib.core.video import read_video_frames
from mmbench_lib.tasks.cmmmu_parser import CATEGORY_FOLDER
from mmbench_lib.core.manifest import resolve

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

# --------------------------------------------------------------------------- drawing helpers


def _font(size: int):
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


def _canvas(size: int = SIZE, bg=BG) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    img = Image.new("RGB", (size, size), bg)
    return img, ImageDraw.Draw(img)


def _shape(d: ImageDraw.ImageDraw, kind: str, cx: float, cy: float, r: float, fill) -> None:
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


def _text(d: ImageDraw.ImageDraw, cx: float, cy: float, text: str, size: int, fill=INK) -> None:
    d.text((cx, cy), text, font=_font(size), fill=fill, anchor="mm")


def _cells(rng: random.Random, n: int, grid: int = 4, size: int = SIZE, jitter: int = 4) -> list[tuple[int, int]]:
    """Centres of ``n`` distinct cells of a ``grid`` x ``grid`` layout, slightly jittered."""
    cell = size // grid
    picks = rng.sample(range(grid * grid), n)
    return [
        (cell * (p % grid) + cell // 2 + rng.randint(-jitter, jitter), cell * (p // grid) + cell // 2 + rng.randint(-jitter, jitter))
        for p in picks
    ]


def _options(rng: random.Random, correct: str, pool) -> tuple[list[str], str]:
    """Four choices (the right one and 3 others from ``pool``) in random order; returns (choices, letter)."""
    others = [p for p in dict.fromkeys(pool) if p != correct]
    opts = [correct] + rng.sample(others, 3)
    rng.shuffle(opts)
    return opts, LETTERS[opts.index(correct)]


def _face(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float, emotion: str) -> None:
    """A cartoon face whose mouth and brows show ``emotion`` (happy, sad, surprised, angry)."""
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(250, 215, 160), outline=INK, width=3)
    ex, ey, er = r * 0.35, cy - r * 0.2, r * 0.1
    for sx in (-1, 1):
        big = er * 1.6 if emotion == "surprised" else er
        d.ellipse((cx + sx * ex - big, ey - big, cx + sx * ex + big, ey + big), fill=INK)
    w = 4
    if emotion == "happy":
        d.arc((cx - r * 0.5, cy - r * 0.1, cx + r * 0.5, cy + r * 0.6), 20, 160, fill=INK, width=w)
    elif emotion == "sad":
        d.arc((cx - r * 0.45, cy + r * 0.3, cx + r * 0.45, cy + r * 0.9), 200, 340, fill=INK, width=w)
    elif emotion == "surprised":
        d.ellipse((cx - r * 0.16, cy + r * 0.25, cx + r * 0.16, cy + r * 0.65), fill=INK)
        for sx in (-1, 1):
            d.arc((cx + sx * ex - r * 0.2, ey - r * 0.45, cx + sx * ex + r * 0.2, ey - r * 0.15), 200, 340, fill=INK, width=w)
    elif emotion == "angry":
        d.line((cx - r * 0.6, ey - r * 0.35, cx - r * 0.15, ey - r * 0.12), fill=INK, width=w + 1)
        d.line((cx + r * 0.6, ey - r * 0.35, cx + r * 0.15, ey - r * 0.12), fill=INK, width=w + 1)
        d.line((cx - r * 0.35, cy + r * 0.5, cx + r * 0.35, cy + r * 0.5), fill=INK, width=w)
    else:
        raise ValueError(emotion)


def _save(img: Image.Image, path: Path) -> None:
    """PNG for ``.png``; JPEG (quality 95) otherwise, including CC3M's extension-less names."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".png":
        img.save(path, format="PNG")
    else:
        img.save(path, format="JPEG", quality=95)


def _a(word: str) -> str:
    """``word`` with its indefinite article ("a red", "an orange")."""
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


def _unique(rng: random.Random, used: set, make) -> str:
    while True:
        value = make(rng)
        if value not in used:
            used.add(value)
            return value


def _cc3m_name(rng: random.Random) -> str:
    return f"{rng.randint(1000000, 3300000)}_{rng.randint(1000000000, 4200000000)}"


# --------------------------------------------------------------------------- image questions
# Each returns (image, question, correct choice, pool of choices incl. the correct one).


def q_scene(rng):
    """Dim 1: which kind of scene (beach, night sky, grassy field, snowy mountains)."""
    scenes = ("A beach", "A night sky", "A grassy field", "Snowy mountains")
    kind = rng.choice(scenes)
    img, d = _canvas()
    if kind == "A beach":
        d.rectangle((0, 0, SIZE, 110), fill=(150, 200, 245))
        d.rectangle((0, 110, SIZE, 150), fill=(30, 100, 200))
        d.rectangle((0, 150, SIZE, SIZE), fill=(235, 210, 140))
        d.ellipse((160, 20, 200, 60), fill=(250, 210, 40))
    elif kind == "A night sky":
        d.rectangle((0, 0, SIZE, SIZE), fill=(15, 20, 60))
        for _ in range(30):
            x, y = rng.randint(5, SIZE - 5), rng.randint(5, SIZE - 5)
            d.ellipse((x - 2, y - 2, x + 2, y + 2), fill=(255, 255, 255))
        d.ellipse((30, 30, 80, 80), fill=(245, 240, 200))
    elif kind == "A grassy field":
        d.rectangle((0, 0, SIZE, 120), fill=(150, 200, 245))
        d.rectangle((0, 120, SIZE, SIZE), fill=(70, 170, 60))
        for _ in range(25):
            x, y = rng.randint(0, SIZE), rng.randint(130, SIZE)
            d.line((x, y, x + 3, y - 10), fill=(30, 110, 30), width=2)
        d.ellipse((20, 20, 60, 60), fill=(250, 210, 40))
    else:
        d.rectangle((0, 0, SIZE, SIZE), fill=(190, 220, 245))
        for x0, h in ((-20, 130), (70, 160), (150, 120)):
            d.polygon([(x0, 190), (x0 + 70, 190 - h), (x0 + 140, 190)], fill=(120, 120, 130))
            d.polygon([(x0 + 52, 190 - h + 36), (x0 + 70, 190 - h), (x0 + 88, 190 - h + 36)], fill=(255, 255, 255))
        d.rectangle((0, 185, SIZE, SIZE), fill=(250, 250, 252))
    return img, "Which kind of scene does the image show?", kind, scenes


def q_identity(rng):
    """Dim 2: the one large shape."""
    kind = rng.choice(SHAPES)
    img, d = _canvas()
    _shape(d, kind, SIZE / 2, SIZE / 2, 70, COLOURS[rng.choice(list(COLOURS))])
    return img, "Which shape is shown in the image?", f"A {kind}", [f"A {s}" for s in SHAPES]


def q_attribute(rng):
    """Dim 3: colour of one named shape among three."""
    kinds = rng.sample(SHAPES, 3)
    colours = rng.sample(list(COLOURS), 3)
    img, d = _canvas()
    for kind, colour, (cx, cy) in zip(kinds, colours, _cells(rng, 3, grid=3)):
        _shape(d, kind, cx, cy, 26, COLOURS[colour])
    return img, f"What colour is the {kinds[0]}?", colours[0].capitalize(), [c.capitalize() for c in COLOURS]


LOCATIONS = {"On the left": (45, 112), "On the right": (179, 112), "At the top": (112, 45), "At the bottom": (112, 179)}


def q_location(rng):
    """Dim 4: where one coloured shape is (left/right/top/bottom); a grey shape marks the centre."""
    where = rng.choice(list(LOCATIONS))
    kind, colour = rng.choice(SHAPES), rng.choice(list(COLOURS))
    img, d = _canvas()
    _shape(d, rng.choice([s for s in SHAPES if s != kind]), 112, 112, 18, (150, 150, 150))
    _shape(d, kind, *LOCATIONS[where], 30, COLOURS[colour])
    return img, f"Where is the {colour} {kind} in the image?", where, list(LOCATIONS)


def q_counting(rng):
    """Dim 5: how many of one shape, with a few other shapes as distractors."""
    kind, other = rng.sample(SHAPES, 2)
    n, m = rng.randint(1, 6), rng.randint(0, 3)
    img, d = _canvas()
    for i, (cx, cy) in enumerate(_cells(rng, n + m)):
        _shape(d, kind if i < n else other, cx, cy, 18, COLOURS[rng.choice(list(COLOURS))])
    return img, f"How many {kind}s are in the image?", NUMBERS[n], NUMBERS[1:8]


def q_spatial(rng):
    """Dim 6: where shape a is relative to shape b."""
    (ka, kb), (ca, cb) = rng.sample(SHAPES, 2), rng.sample(list(COLOURS), 2)
    rel = {f"To the left of the {kb}": (-75, 0), f"To the right of the {kb}": (75, 0),
           f"Above the {kb}": (0, -75), f"Below the {kb}": (0, 75)}
    answer = rng.choice(list(rel))
    bx, by = 112 + rng.randint(-10, 10), 112 + rng.randint(-10, 10)
    img, d = _canvas()
    _shape(d, kb, bx, by, 24, COLOURS[cb])
    _shape(d, ka, bx + rel[answer][0], by + rel[answer][1], 24, COLOURS[ca])
    return img, f"Where is the {ca} {ka} relative to the {cb} {kb}?", answer, list(rel)


def _dist_to_segment(p, a, b) -> float:
    ax, ay, bx, by, px, py = *a, *b, *p
    t = max(0.0, min(1.0, ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2)))
    return math.hypot(px - (ax + t * (bx - ax)), py - (ay + t * (by - ay)))


def _arrow(d: ImageDraw.ImageDraw, a, b, gap: float) -> None:
    """An arrow from near point a to near point b."""
    (ax, ay), (bx, by) = a, b
    L = math.hypot(bx - ax, by - ay)
    ux, uy = (bx - ax) / L, (by - ay) / L
    sx, sy, ex, ey = ax + ux * gap, ay + uy * gap, bx - ux * gap, by - uy * gap
    d.line((sx, sy, ex, ey), fill=INK, width=4)
    d.polygon([(ex, ey), (ex - ux * 14 - uy * 8, ey - uy * 14 + ux * 8), (ex - ux * 14 + uy * 8, ey - uy * 14 - ux * 8)], fill=INK)


def q_interaction(rng):
    """Dim 7: an arrow links two of three shapes; which one does it point to."""
    kinds = rng.sample(SHAPES, 3)
    while True:
        pts = _cells(rng, 3, grid=3, jitter=0)
        if math.dist(pts[0], pts[1]) > 100 and _dist_to_segment(pts[2], pts[0], pts[1]) > 40:
            break
    img, d = _canvas()
    for kind, (cx, cy) in zip(kinds, pts):
        _shape(d, kind, cx, cy, 22, COLOURS[rng.choice(list(COLOURS))])
    _arrow(d, pts[0], pts[1], 30)
    q = f"An arrow starts at the {kinds[0]}. Which shape does the arrow point to?"
    return img, q, f"The {kinds[1]}", [f"The {s}" for s in SHAPES if s != kinds[0]]


def q_reasoning(rng):
    """Dim 8: which shape appears exactly once (the others appear 2-3 times)."""
    once, *rest = rng.sample(SHAPES, 3)
    kinds = [once] + [k for k in rest for _ in range(rng.randint(2, 3))]
    img, d = _canvas()
    for kind, (cx, cy) in zip(kinds, _cells(rng, len(kinds))):
        _shape(d, kind, cx, cy, 18, COLOURS[rng.choice(list(COLOURS))])
    return img, "Which shape appears only once in the image?", f"The {once}", [f"The {s}" for s in SHAPES]


def q_text(rng):
    """Dim 9: a word rendered large, black on white (legible to OCR)."""
    word = rng.choice(WORDS)
    img, d = _canvas(bg=(255, 255, 255))
    _text(d, SIZE / 2, SIZE / 2, word, 48)
    return img, "What word is written in the image?", word, WORDS


NAMES = ("Alice Moreau", "Bruno Tanaka", "Carla Jensen", "David Okafor", "Elena Rossi", "Farid Haddad")


def q_celebrity(rng):
    """SEED-2 dim 10: a face with a name badge; who is it."""
    name = rng.choice(NAMES)
    img, d = _canvas()
    _face(d, 112, 85, 60, rng.choice(["happy", "surprised"]))
    d.rectangle((12, 165, 212, 205), fill=(255, 255, 255), outline=INK, width=2)
    _text(d, 112, 185, name, 22)
    return img, "Who is the person in the image?", name, NAMES


def _landmark(d, kind):
    if kind == "A pyramid in the desert":
        d.rectangle((0, 0, SIZE, 150), fill=(150, 200, 245))
        d.rectangle((0, 150, SIZE, SIZE), fill=(230, 200, 130))
        d.polygon([(30, 160), (112, 50), (194, 160)], fill=(210, 170, 90), outline=INK)
        d.polygon([(112, 50), (194, 160), (140, 160)], fill=(180, 140, 70))
    elif kind == "A lighthouse by the sea":
        d.rectangle((0, 0, SIZE, 160), fill=(150, 200, 245))
        d.rectangle((0, 160, SIZE, SIZE), fill=(30, 90, 190))
        for i in range(5):
            y0 = 60 + i * 20
            d.rectangle((92 - i * 2, y0, 132 + i * 2, y0 + 20), fill=(220, 40, 40) if i % 2 == 0 else (255, 255, 255))
        d.rectangle((96, 40, 128, 60), fill=(250, 220, 60), outline=INK)
        d.polygon([(90, 40), (112, 20), (134, 40)], fill=(60, 60, 60))
    elif kind == "A stone arch bridge":
        d.rectangle((0, 0, SIZE, SIZE), fill=(150, 200, 245))
        d.rectangle((0, 150, SIZE, SIZE), fill=(40, 110, 190))
        d.rectangle((10, 90, 214, 170), fill=(140, 130, 120), outline=INK)
        for x0 in (25, 90, 155):
            d.ellipse((x0, 120, x0 + 45, 200), fill=(40, 110, 190))
    else:
        d.rectangle((0, 0, SIZE, 150), fill=(150, 200, 245))
        d.rectangle((0, 150, SIZE, SIZE), fill=(90, 170, 70))
        d.polygon([(95, 170), (102, 80), (122, 80), (129, 170)], fill=(200, 190, 170), outline=INK)
        for a in (45, 135, 225, 315):
            r = math.radians(a)
            d.line((112, 80, 112 + 70 * math.cos(r), 80 + 70 * math.sin(r)), fill=(90, 60, 40), width=8)


def q_landmark(rng):
    """SEED-2 dim 11: which drawn landmark."""
    kinds = ("A pyramid in the desert", "A lighthouse by the sea", "A stone arch bridge", "A windmill in a field")
    kind = rng.choice(kinds)
    img, d = _canvas()
    _landmark(d, kind)
    return img, "Which landmark is shown in the image?", kind, kinds


def q_chart(rng):
    """SEED-2 dim 12: a labelled bar chart; which bar is highest."""
    start = rng.randint(0, 3)
    days = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[start:start + 4]
    values = rng.sample(range(2, 10), 4)
    img, d = _canvas(bg=(255, 255, 255))
    d.line((20, 190, 210, 190), fill=INK, width=2)
    d.line((20, 20, 20, 190), fill=INK, width=2)
    for i, (day, v) in enumerate(zip(days, values)):
        x0 = 32 + i * 46
        d.rectangle((x0, 190 - v * 18, x0 + 32, 190), fill=(60, 110, 200))
        _text(d, x0 + 16, 205, day, 16)
        _text(d, x0 + 16, 180 - v * 18, str(v), 14)
    best = days[values.index(max(values))]
    return img, "Which day has the highest value in the bar chart?", best, days


def q_referring(rng):
    """SEED-2 dim 13: four shapes, a red box around one; what is inside the box."""
    kinds = rng.sample(SHAPES, 4)
    pts = _cells(rng, 4, grid=3, jitter=0)
    colours = [c for c in COLOURS if c != "red"]
    img, d = _canvas()
    for kind, (cx, cy) in zip(kinds, pts):
        _shape(d, kind, cx, cy, 20, COLOURS[rng.choice(colours)])
    cx, cy = pts[0]
    d.rectangle((cx - 30, cy - 30, cx + 30, cy + 30), outline=COLOURS["red"], width=3)
    return img, "What is the object inside the red box?", f"A {kinds[0]}", [f"A {k}" for k in kinds]


def q_magnets(rng):
    """SEED-2 dim 14: two bar magnets; attract (unlike poles facing) or repel."""
    left, right = rng.choice(["NS", "SN"]), rng.choice(["NS", "SN"])
    img, d = _canvas()
    for x0, poles in ((14, left), (126, right)):
        for j, pole in enumerate(poles):
            colour = COLOURS["red"] if pole == "N" else COLOURS["blue"]
            d.rectangle((x0 + j * 42, 92, x0 + j * 42 + 42, 132), fill=colour, outline=INK, width=2)
            _text(d, x0 + j * 42 + 21, 112, pole, 26, fill=(255, 255, 255))
    answer = "Repel" if left[1] == right[0] else "Attract"
    pool = ("Attract", "Repel", "Neither, magnets do not affect each other", "It depends on the colour of the magnets")
    return img, "Will these magnets attract or repel each other?", answer, pool


def q_emotion(rng):
    """SEED-2 dim 15: a cartoon face; which emotion."""
    emotion = rng.choice(["happy", "sad", "surprised", "angry"])
    img, d = _canvas()
    _face(d, 112, 112, 80, emotion)
    return img, "What emotion does the face in the image show?", emotion.capitalize(), ("Happy", "Sad", "Surprised", "Angry")


def q_math(rng):
    """SEED-2 dim 16: a rendered arithmetic expression; its value."""
    a, b = rng.randint(2, 12), rng.randint(2, 9)
    op = rng.choice("+-x")
    if op == "-" and a < b:
        a, b = b, a
    value = a + b if op == "+" else a - b if op == "-" else a * b
    img, d = _canvas(bg=(255, 255, 255))
    _text(d, SIZE / 2, SIZE / 2, f"{a} {op} {b} = ?", 40)
    pool = [str(value + k) for k in (0, 1, -1, 2, -2, 10)]
    return img, "What is the value of the expression in the image?", str(value), pool


V1_IMAGE_QUESTIONS = {1: q_scene, 2: q_identity, 3: q_attribute, 4: q_location, 5: q_counting,
                      6: q_spatial, 7: q_interaction, 8: q_reasoning, 9: q_text}
V2_IMAGE_QUESTIONS = {9: q_text, 10: q_celebrity, 11: q_landmark, 12: q_chart, 13: q_referring,
                      14: q_magnets, 15: q_emotion, 16: q_math}
V2_IMAGE_FOLDERS = {9: "task9/text_image", 10: "task10/celebrity", 11: "task11/landmark", 12: "task12/plotqa",
                    13: "task13/vcr", 14: "task14/scienceqa", 15: "task15/fer2013", 16: "task16/math"}

# --------------------------------------------------------------------------- videos

VIDEO_CODECS = {  # container -> encoders to try, in order of preference
    "webm": ("libvpx-vp9", "libvpx"),
    "mp4": ("libx264", "mpeg4"),
    "avi": ("mpeg4", "mjpeg"),
}


def encode_video(path: Path, frames: list[np.ndarray], fps: int) -> str:
    """Encode RGB frames with PyAV, bit-exact; returns the encoder used (first that works)."""
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = {".webm": "webm", ".mp4": "mp4", ".avi": "avi"}[path.suffix.lower()]
    errors = []
    for codec in VIDEO_CODECS[fmt]:
        try:
            with av.open(str(path), "w", format=fmt, options={"fflags": "+bitexact"}) as out:
                stream = out.add_stream(codec, rate=Fraction(fps))
                stream.width, stream.height = frames[0].shape[1], frames[0].shape[0]
                stream.pix_fmt = "yuvj420p" if codec == "mjpeg" else "yuv420p"
                stream.codec_context.thread_count = 1  # multi-threaded encoders may not be bit-exact
                stream.codec_context.flags |= 1 << 23  # AV_CODEC_FLAG_BITEXACT
                for arr in frames:
                    for packet in stream.encode(av.VideoFrame.from_ndarray(arr, format="rgb24")):
                        out.mux(packet)
                for packet in stream.encode():
                    out.mux(packet)
            return codec
        except Exception as e:  # encoder missing from this FFmpeg build: try the next one
            errors.append(f"{codec}: {e}")
    raise RuntimeError(f"{path}: no working encoder for {fmt}: {'; '.join(errors)}")


SSV2_ACTIONS = {  # label -> (start, end) of the square's centre, as fractions of the frame
    "Moving something from left to right": ((0.15, 0.5), (0.85, 0.5)),
    "Moving something from right to left": ((0.85, 0.5), (0.15, 0.5)),
    "Moving something down": ((0.5, 0.15), (0.5, 0.85)),
    "Moving something up": ((0.5, 0.85), (0.5, 0.15)),
}


def ssv2_frames(action: str, colour, n: int = 30, size: int = 96) -> list[np.ndarray]:
    """A square moving in a straight line across the frame (SSv2-like, dim 10)."""
    (x0, y0), (x1, y1) = SSV2_ACTIONS[action]
    out = []
    for i in range(n):
        t = i / (n - 1)
        img, d = _canvas(size)
        cx, cy = size * (x0 + t * (x1 - x0)), size * (y0 + t * (y1 - y0))
        d.rectangle((cx - 10, cy - 10, cx + 10, cy + 10), fill=colour)
        out.append(np.asarray(img))
    return out


EPIC_COLOURS = ("red", "green", "blue", "yellow")
EPIC_FPS, EPIC_BLOCK, EPIC_BLOCKS = 30, 15, 8  # 8 colour blocks of 0.5 s: a 4 s clip


def epic_frames(cycle: list[str], size: int = 96) -> list[np.ndarray]:
    """The whole frame cycles through ``cycle`` colours, one per 0.5 s block (dim 11)."""
    out = []
    for i in range(EPIC_BLOCK * EPIC_BLOCKS):
        img, d = _canvas(size, COLOURS[cycle[(i // EPIC_BLOCK) % len(cycle)]])
        d.rectangle((size // 2 - 6, size - 20, size // 2 + 6, size - 8), fill=(255, 255, 255))
        out.append(np.asarray(img))
    return out


BREAKFAST_FPS, BREAKFAST_LEN = 15, 60


def breakfast_frames(steps: list[str], segment: tuple[int, int], rng: random.Random, size: int = 96) -> list[np.ndarray]:
    """Shapes appear one by one inside ``segment`` (frame numbers) and stay (dim 12)."""
    start, end = segment[0], min(segment[1], BREAKFAST_LEN)
    appear = [start + k * (end - start) // len(steps) for k in range(len(steps))]
    places = _cells(rng, len(steps), grid=3, size=size, jitter=0)
    colours = rng.sample(list(COLOURS), len(steps))
    out = []
    for i in range(BREAKFAST_LEN):
        img, d = _canvas(size)
        for kind, t, (cx, cy), c in zip(steps, appear, places, colours):
            if i >= t:
                _shape(d, kind, cx, cy, 11, COLOURS[c])
        out.append(np.asarray(img))
    return out


def _steps_text(order) -> str:
    return ", ".join(f"draw {k}" for k in order)


# --------------------------------------------------------------------------- SEED-Bench v1


def _v1_record(qid, dim, question, choices, answer, data_type, data_id, segment=None) -> dict:
    rec = {"answer": answer}
    rec.update({f"choice_{c}": t for c, t in zip("abcd", choices)})
    rec.update({"data_id": data_id, "data_type": data_type, "question": question,
                "question_id": qid, "question_type_id": dim})
    if segment is not None:
        rec["segment"] = list(segment)
    return rec


def _make_seed1(root: Path, rng: random.Random, per_dim: int = 3) -> tuple[dict, list[dict]]:
    """Write ``root/SEED-Bench.json``, ``root/cc3m/`` and ``root/videos/*``; returns (paths, records)."""
    cc3m = root / "cc3m"
    vroots = {name: root / "videos" / name for name in ("ssv2", "epic_kitchens", "breakfast")}
    used_ids, used_names, codecs, records = set(), set(), {}, []

    def qid_image(r):
        return str(r.randint(10000, 199999))

    def qid_video(r):
        return f"v{r.randint(1000, 4999)}"

    for dim, make in V1_IMAGE_QUESTIONS.items():
        for _ in range(per_dim):
            img, question, correct, pool = make(rng)
            choices, answer = _options(rng, correct, pool)
            data_id = _unique(rng, used_names, _cc3m_name)
            _save(img, cc3m / data_id)
            records.append(_v1_record(_unique(rng, used_ids, qid_image), dim, question, choices, answer, "image", data_id))

    # dim 10: Something-Something v2, whole clip, 12 fps
    for action in rng.sample(list(SSV2_ACTIONS), per_dim):
        name = _unique(rng, used_names, lambda r: f"{r.randint(1000, 220000)}.webm")
        codecs["ssv2"] = encode_video(vroots["ssv2"] / name, ssv2_frames(action, COLOURS[rng.choice(list(COLOURS))]), 12)
        choices, answer = _options(rng, action, SSV2_ACTIONS)
        records.append(_v1_record(_unique(rng, used_ids, qid_video), 10, "What is the action being carried out in the video?",
                                  choices, answer, "video", name))

    # dim 11: Epic-Kitchens, segment in seconds; the colours cycle, predict the next one
    videos = ["P01/P01_11.MP4", "P03/P03_24.MP4"]
    cycles = {v: rng.sample(EPIC_COLOURS, 3) for v in videos}
    for v in videos:
        codecs["epic_kitchens"] = encode_video(vroots["epic_kitchens"] / v, epic_frames(cycles[v]), EPIC_FPS)
    for k in range(per_dim):
        v = videos[k % 2]
        first = rng.randint(0, 2)
        last = rng.randint(first + 4, EPIC_BLOCKS - 1)
        segment = [first * EPIC_BLOCK / EPIC_FPS, last * EPIC_BLOCK / EPIC_FPS]
        nxt = cycles[v][last % 3].capitalize()
        choices, answer = _options(rng, nxt, [c.capitalize() for c in EPIC_COLOURS])
        q = "The colours in this video repeat in a fixed cycle. Which colour will appear right after the end of this video?"
        records.append(_v1_record(_unique(rng, used_ids, qid_video), 11, q, choices, answer, "video", v, segment))

    # dim 12: Breakfast, 15 fps, segment in frame numbers (the last one runs past the end)
    videos = ["P03/cam01/P03_cereals.avi", "P06/cam01/P06_milk.avi", "P15/webcam01/P15_tea.avi"]
    segments = [[6, 54], [0, 59], [15, 75]]
    for k in range(per_dim):
        v, seg = videos[k % 3], segments[k % 3]
        steps = rng.sample(["circle", "square", "triangle"], 3)
        codecs["breakfast"] = encode_video(vroots["breakfast"] / v, breakfast_frames(steps, seg, rng), BREAKFAST_FPS)
        pool = [_steps_text(p) for p in _permutations(["circle", "square", "triangle"])]
        choices, answer = _options(rng, _steps_text(steps), pool)
        q = "Can you identify the sequence of actions in this video and list them in order?"
        records.append(_v1_record(_unique(rng, used_ids, qid_video), 12, q, choices, answer, "video", v, seg))

    qtypes = {name: dim for dim, (name, _) in seed1.DIMENSIONS.items()}
    _write_json(root / "SEED-Bench.json", {"questions": records, "question_type": qtypes})
    paths = {"annotation_file": str(root / "SEED-Bench.json"), "image_root": str(cc3m),
             "video_roots": {k: str(p) for k, p in vroots.items()}, "video_codecs": codecs}
    return paths, records


def _permutations(xs: list) -> list[list]:
    if len(xs) <= 1:
        return [list(xs)]
    return [[x] + rest for i, x in enumerate(xs) for rest in _permutations(xs[:i] + xs[i + 1:])]


def _write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


# --------------------------------------------------------------------------- SEED-Bench-2

V2_DATA_TYPE = {**{d: "Single Image" for d in range(1, 17)}, 17: "Multiple Images", 18: "Multiple Images",
                **{d: "Video" for d in range(19, 23)}, 23: "Interleaved Image", 24: "Interleaved Image",
                25: "Image Generation", 26: "Image Generation", 27: "Image & Text Generation"}
#: official ``question_type`` names (SEED-Bench-2 DATASET.md): id 9 is "Text Understanding" there
V2_TYPE_NAMES = {d: ("Text Understanding" if d == 9 else name) for d, (name, _, _) in seed2.DIMENSIONS.items()}


class _Seed2Writer:
    """Collects SEED-Bench-2 records and writes their media under the two official roots."""

    def __init__(self, root: Path, rng: random.Random):
        self.root, self.rng = root, rng
        self.cc3m, self.v2 = root / "cc3m", root / "SEED-Bench-v2"
        self.generated = root / "generated"
        self.records: list[dict] = []
        self.used: set = set()
        self.count: dict[int, int] = {}

    def add(self, dim, question, choices, answer, data_id, source="SEED-Bench v2") -> str:
        k = self.count.get(dim, 0)
        self.count[dim] = k + 1
        qid = f"{dim}_{k}"
        _, subpart, level = seed2.DIMENSIONS[dim]
        rec = {"answer": answer}
        rec.update({f"choice_{c}": t for c, t in zip("abcd", choices)})
        rec.update({"data_id": data_id, "data_source": source, "data_type": V2_DATA_TYPE[dim], "level": level,
                    "question": question, "question_id": qid, "question_type_id": dim, "subpart": subpart,
                    "version": "v1" if dim <= 8 or 20 <= dim <= 22 else "v2"})
        self.records.append(rec)
        return qid

    def save(self, img: Image.Image, rel: str) -> str:
        _save(img, self.v2 / rel)
        return rel

    def name(self, make) -> str:
        return _unique(self.rng, self.used, make)

    def generated_image(self, qid: str, correct_rel: str) -> None:
        """A slightly perturbed copy of the right option image, as if a model had generated it."""
        arr = np.asarray(Image.open(self.v2 / correct_rel).convert("RGB")).astype(np.int16)
        noise = np.random.default_rng(self.rng.randrange(2**32)).integers(-12, 13, size=arr.shape)
        arr = np.roll(arr, (2, 3), axis=(0, 1)) * 0.95 + noise
        _save(Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)), self.generated / f"{qid}.png")


def _make_seed2(root: Path, rng: random.Random, v1: list[dict], v1_paths: dict, per_dim: int = 2) -> dict:
    """Write ``root/SEED-Bench_v2_level1_2_3.json`` and its media; returns the paths."""
    w = _Seed2Writer(root, rng)
    _inherit_v1_images(w, v1, Path(v1_paths["image_root"]), per_dim)
    _v2_single_images(w, per_dim)
    _v2_difference(w, per_dim)
    _v2_meme(w, per_dim)
    _v2_charades(w, per_dim)
    _inherit_v1_videos(w, v1, v1_paths, per_dim)
    _v2_in_context(w)
    _v2_interleaved(w, per_dim)
    _v2_text_to_image(w, per_dim)
    _v2_next_image(w, per_dim)
    _v2_text_image(w, per_dim)
    w.records.sort(key=lambda r: (r["question_type_id"], int(r["question_id"].split("_")[1])))
    qtypes = {V2_TYPE_NAMES[d]: d for d in sorted(V2_TYPE_NAMES)}
    _write_json(root / "SEED-Bench_v2_level1_2_3.json", {"questions": w.records, "question_type": qtypes})
    return {"annotation_file": str(root / "SEED-Bench_v2_level1_2_3.json"), "cc3m_dir": str(w.cc3m),
            "seed_bench_v2_dir": str(w.v2), "generated_dir": str(w.generated)}


def _first(records: list[dict], dim: int, n: int) -> list[dict]:
    return [r for r in records if r["question_type_id"] == dim][:n]


def _choices_of(rec: dict) -> list[str]:
    return [rec[f"choice_{c}"] for c in "abcd"]


def _inherit_v1_images(w: _Seed2Writer, v1: list[dict], cc3m_v1: Path, n: int) -> None:
    """Dims 1-8: the SEED-Bench-1 questions and CC3M images, as SEED-Bench-2 inherits them."""
    for dim in range(1, 9):
        for rec in _first(v1, dim, n):
            w.cc3m.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cc3m_v1 / rec["data_id"], w.cc3m / rec["data_id"])
            w.add(dim, rec["question"], _choices_of(rec), rec["answer"], rec["data_id"], source="cc3m")


def _v2_single_images(w: _Seed2Writer, n: int) -> None:
    """Dims 9-16: one image each; dim 9's first item comes from the cc3m root."""
    for dim, make in V2_IMAGE_QUESTIONS.items():
        for k in range(n):
            img, question, correct, pool = make(w.rng)
            choices, answer = _options(w.rng, correct, pool)
            if dim == 9 and k == 0:
                data_id = w.name(_cc3m_name)
                _save(img, w.cc3m / data_id)
                w.add(dim, question, choices, answer, data_id, source="cc3m")
                continue
            ext = ".png" if dim in (12, 14, 16) else ".jpg"
            rel = w.save(img, f"{V2_IMAGE_FOLDERS[dim]}/{w.name(lambda r: str(r.randint(100, 99999)))}{ext}")
            w.add(dim, question, choices, answer, rel)


def _draw_layout(layout) -> Image.Image:
    img, d = _canvas()
    for kind, colour, (cx, cy) in layout:
        _shape(d, kind, cx, cy, 22, COLOURS[colour])
    return img


def _v2_difference(w: _Seed2Writer, n: int) -> None:
    """Dim 17: two images; one shape is removed or recoloured in the right one."""
    rng = w.rng
    for _ in range(n):
        kinds, colours = rng.sample(SHAPES, 4), rng.sample(list(COLOURS), 4)
        layout = list(zip(kinds, colours, _cells(rng, 4, grid=3, jitter=0)))
        target = rng.randrange(4)
        kind, colour, pos = layout[target]
        new_colour = rng.choice([c for c in COLOURS if c not in colours])
        changed = list(layout)
        if rng.random() < 0.5:
            del changed[target]
            correct = f"The {colour} {kind} from the left image is missing in the right image."
        else:
            changed[target] = (kind, new_colour, pos)
            correct = f"The {colour} {kind} from the left image is {new_colour} in the right image."
        false = [f"The {c} {k} from the left image is missing in the right image." for k, c, _ in layout if k != kind]
        false += [f"The {c} {k} from the left image is {c2} in the right image."
                  for k, c, _ in layout for c2 in COLOURS if c2 != c and (k != kind or c2 != new_colour)]
        false += [f"A {k} has been added to the right image." for k in SHAPES if k not in kinds]
        options = [correct] + rng.sample([f for f in false if f != correct], 3)
        rng.shuffle(options)
        stem = f"task17/SD_image/SD_IMG_{w.name(lambda r: f'{r.randint(1, 999):05d}')}"
        ids = [w.save(_draw_layout(layout), f"{stem}_1.png"), w.save(_draw_layout(changed), f"{stem}_2.png")]
        w.add(17, "What are the differences between the two images?", options, LETTERS[options.index(correct)], ids)


MEME_CAPTIONS = (("MONDAY", "FRIDAY"), ("BEFORE COFFEE", "AFTER COFFEE"), ("EXAM DAY", "HOLIDAY"))


def _v2_meme(w: _Seed2Writer, n: int) -> None:
    """Dim 18: a two-panel meme, a caption and a face per panel; which feelings go with which caption."""
    rng = w.rng
    for caps in rng.sample(MEME_CAPTIONS, n):
        e1, e2, e3 = rng.sample(["happy", "sad", "angry", "surprised"], 3)
        group = w.name(lambda r: str(r.randint(1, 999)))
        ids = []
        for j, (cap, emo) in enumerate(zip(caps, (e1, e2))):
            img, d = _canvas(bg=(255, 255, 255))
            _text(d, 112, 24, cap, 24)
            _face(d, 112, 130, 70, emo)
            ids.append(w.save(img, f"task18/meme/{group}_{j + 1}.png"))

        def say(a, b):
            return f"{a.capitalize()} about {caps[0].lower()}, {b} about {caps[1].lower()}"

        correct = say(e1, e2)
        pool = [correct, say(e2, e1), say(e1, e1), say(e2, e2), say(e3, e2), say(e1, e3)]
        choices, answer = _options(rng, correct, pool)
        w.add(18, "Which feelings does this two-panel meme express?", choices, answer, ids)


CHARADES_EVENTS = ("rolls from left to right", "rolls from right to left", "falls from the top to the bottom", "grows bigger")


def _charades_frame(event: str, t: float, colour) -> Image.Image:
    img, d = _canvas(128)
    x, y, r = 64, 64, 14
    if event == CHARADES_EVENTS[0]:
        x = 20 + t * 88
    elif event == CHARADES_EVENTS[1]:
        x = 108 - t * 88
    elif event == CHARADES_EVENTS[2]:
        y = 20 + t * 88
    else:
        r = 8 + t * 40
    d.ellipse((x - r, y - r, x + r, y + r), fill=colour, outline=INK, width=2)
    return img


def _v2_charades(w: _Seed2Writer, n: int) -> None:
    """Dim 19: 8 frames of a ball doing one thing (Charades-style frame folder)."""
    rng = w.rng
    for event in rng.sample(CHARADES_EVENTS, n):
        colour = rng.choice(list(COLOURS))
        vid = w.name(lambda r: "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(5)))
        ids = [w.save(_charades_frame(event, i / 7, COLOURS[colour]), f"task19/Charades_test_frame/{vid}/{i + 1}.png")
               for i in range(8)]
        ball = f"{_a(colour).capitalize()} ball"
        choices, answer = _options(rng, f"{ball} {event}", [f"{ball} {e}" for e in CHARADES_EVENTS])
        w.add(19, "What happens in the video?", choices, answer, ids)


V2_VIDEO_FOLDERS = {20: "task20/SSv2_frame", 21: "task21/Epic_Kitchens_frame", 22: "task22/Breakfast_frame"}


def _inherit_v1_videos(w: _Seed2Writer, v1: list[dict], v1_paths: dict, n: int) -> None:
    """Dims 20-22: the SEED-Bench-1 video questions, shipped as the 8 frames of the official sampler."""

    for dim, v1_dim in ((20, 10), (21, 11), (22, 12)):
        root = Path(v1_paths["video_roots"][seed1.VIDEO_SOURCES[v1_dim]])
        for rec in _first(v1, v1_dim, n):
            frames = read_video_frames(root / rec["data_id"], seed1.VIDEO_RULES[v1_dim], rec.get("segment"))
            ids = [w.save(f, f"{V2_VIDEO_FOLDERS[dim]}/{rec['question_id']}/{i + 1}.png") for i, f in enumerate(frames)]
            w.add(dim, rec["question"], _choices_of(rec), rec["answer"], ids)


def _single_shape_image(kind: str, colour: str, count: int = 1, rng: random.Random | None = None) -> Image.Image:
    img, d = _canvas()
    if count == 1:
        _shape(d, kind, 112, 112, 60, COLOURS[colour])
    else:
        for cx, cy in _cells(rng, count, grid=3, jitter=0):
            _shape(d, kind, cx, cy, 24, COLOURS[colour])
    return img


def _v2_in_context(w: _Seed2Writer) -> None:
    """Dim 23: two captioned examples, then a third image to caption (colour, then count)."""
    rng = w.rng
    kinds, colours = rng.sample(SHAPES, 3), rng.sample(list(COLOURS), 3)
    group = f"in_context_attribute_{w.name(lambda r: str(r.randint(0, 60)))}"
    ids = [w.save(_single_shape_image(k, c), f"task23/ICL_images/{group}/{i + 1}.jpg")
           for i, (k, c) in enumerate(zip(kinds, colours))]
    caps = [f"The {k} is {c}." for k, c in zip(kinds, colours)]
    choices, answer = _options(rng, caps[2], [f"The {kinds[2]} is {c}." for c in COLOURS])
    w.add(23, f"<img>: {caps[0]} <img>: {caps[1]} <img>:", choices, answer, ids)

    kind, colour = rng.choice(SHAPES), rng.choice(list(COLOURS))
    counts = rng.sample(range(2, 7), 3)
    group = f"in_context_count_{w.name(lambda r: str(r.randint(0, 60)))}"
    ids = [w.save(_single_shape_image(kind, colour, c, rng), f"task23/ICL_images/{group}/{i + 1}.jpg")
           for i, c in enumerate(counts)]
    caps = [f"There are {NUMBERS[c].lower()} {kind}s." for c in counts]
    choices, answer = _options(rng, caps[2], [f"There are {NUMBERS[c].lower()} {kind}s." for c in range(2, 8)])
    w.add(23, f"<img>: {caps[0]} <img>: {caps[1]} <img>:", choices, answer, ids)


ORDINALS = ("first", "second", "third")


def _v2_interleaved(w: _Seed2Writer, n: int) -> None:
    """Dim 24: 2 or 3 interleaved pictures; which one has the most circles."""
    rng = w.rng
    for k in range(n):
        m = 2 + k % 2
        counts = rng.sample(range(1, 6), m)
        group = w.name(lambda r: str(r.randint(1, 500)))
        ids = []
        for i, c in enumerate(counts):
            img, d = _canvas()
            for j, (cx, cy) in enumerate(_cells(rng, c + 2)):
                _shape(d, "circle" if j < c else "square", cx, cy, 18, COLOURS[rng.choice(list(COLOURS))])
            ids.append(w.save(img, f"task24/interleaved/{group}/{i + 1}.png"))
        text = " ".join(f"<img> This is the {ORDINALS[i]} picture." for i in range(m))
        if m == 2:
            q = f"{text} Which picture contains more circles?"
            pool = ["The first picture", "The second picture", "Both contain the same number of circles",
                    "Neither picture contains circles"]
        else:
            q = f"{text} Which picture contains the most circles?"
            pool = ["The first picture", "The second picture", "The third picture", "All contain the same number of circles"]
        correct = pool[counts.index(max(counts))]
        choices, answer = _options(rng, correct, pool)
        w.add(24, q, choices, answer, ids)


def _two_shapes(top, bottom) -> Image.Image:
    img, d = _canvas()
    _shape(d, top[1], 112, 60, 38, COLOURS[top[0]])
    _shape(d, bottom[1], 112, 166, 38, COLOURS[bottom[0]])
    return img


def _v2_text_to_image(w: _Seed2Writer, n: int) -> None:
    """Dim 25: which of 4 images fits "A <c1> <s1> above a <c2> <s2>."; choices are file names."""
    rng = w.rng
    for _ in range(n):
        (s1, s2, s3), (c1, c2) = rng.sample(SHAPES, 3), rng.sample(list(COLOURS), 2)
        right = ((c1, s1), (c2, s2))
        wrong = [((c2, s1), (c1, s2)), ((c2, s2), (c1, s1)), ((c1, s3), (c2, s2))]
        options = [right] + wrong
        rng.shuffle(options)
        folder = f"task25/image/{w.name(lambda r: str(r.randint(0, 1007)))}"
        ids = [w.save(_two_shapes(*opt), f"{folder}/{i + 1}.jpg") for i, opt in enumerate(options)]
        q = f"Which picture below better fits the description: {_a(c1).capitalize()} {s1} above {_a(c2)} {s2}."
        qid = w.add(25, q, [f"{i}.jpg" for i in range(1, 5)], LETTERS[options.index(right)], ids)
        w.generated_image(qid, ids[options.index(right)])


def _moving_square(pos, colour) -> Image.Image:
    img, d = _canvas()
    d.rectangle((0, 176, SIZE, SIZE), fill=(200, 190, 170))
    x, y = pos
    d.rectangle((x - 20, y - 20, x + 20, y + 20), fill=COLOURS[colour], outline=INK, width=2)
    return img


def _v2_next_image(w: _Seed2Writer, n: int) -> None:
    """Dim 26: 3 frames of a square moving step by step; which of 4 images comes next."""
    rng = w.rng
    for _ in range(n):
        colour, other = rng.sample(list(COLOURS), 2)
        dx, dy = rng.choice([(40, 0), (-40, 0), (0, 36)])
        x0, y0 = (52 if dx > 0 else 172 if dx < 0 else 112), (40 if dy else 112)
        path = [(x0 + i * dx, y0 + i * dy) for i in range(5)]
        ctx = path[:3]
        right = (path[3], colour)
        wrong = [(path[0], colour), ((path[2][0] + dy, path[2][1] + dx), colour), (path[3], other)]
        options = [right] + wrong
        rng.shuffle(options)
        folders = [w.name(lambda r: f"v{r.randint(1000, 3999)}") for _ in range(7)]
        base = "task26/kitchen_start_end_frame"
        ids = [w.save(_moving_square(p, colour), f"{base}/{folders[i]}/1.png") for i, p in enumerate(ctx)]
        names = [f"{folders[3 + i]}/{rng.choice('12')}.png" for i in range(4)]
        ids += [w.save(_moving_square(p, c), f"{base}/{name}") for (p, c), name in zip(options, names)]
        qid = w.add(26, "What will happen next?", names, LETTERS[options.index(right)], ids)
        w.generated_image(qid, ids[3 + options.index(right)])


def _draw_snowman(d):
    d.rectangle((0, 0, SIZE, SIZE), fill=(190, 220, 245))
    d.rectangle((0, 190, SIZE, SIZE), fill=(255, 255, 255))
    for cy, r in ((160, 40), (95, 30), (45, 22)):
        d.ellipse((112 - r, cy - r, 112 + r, cy + r), fill=(255, 255, 255), outline=INK, width=2)
    d.ellipse((102, 38, 108, 44), fill=INK)
    d.ellipse((116, 38, 122, 44), fill=INK)
    d.polygon([(112, 46), (140, 50), (112, 54)], fill=COLOURS["orange"])


def _draw_traffic_light(d):
    d.rectangle((82, 20, 142, 200), fill=(40, 40, 40))
    for cy, c in ((55, "red"), (110, "yellow"), (165, "green")):
        d.ellipse((94, cy - 18, 130, cy + 18), fill=COLOURS[c])


def _draw_house(d):
    d.rectangle((0, 180, SIZE, SIZE), fill=(90, 170, 70))
    d.rectangle((52, 100, 172, 190), fill=(230, 210, 170), outline=INK, width=2)
    d.polygon([(40, 100), (112, 40), (184, 100)], fill=COLOURS["red"], outline=INK)
    d.rectangle((95, 140, 125, 190), fill=(120, 70, 40))
    d.rectangle((138, 120, 160, 142), fill=(170, 210, 245), outline=INK)


CREATIONS = {
    "snowman": ("A snowman is made of three white balls of snow stacked on top of each other, the largest at the "
                "bottom and the smallest on top, with two dark eyes and an orange carrot nose.", _draw_snowman),
    "traffic light": ("A traffic light is a dark upright box with three round lamps stacked vertically: red at the "
                      "top, yellow in the middle and green at the bottom.", _draw_traffic_light),
    "house": ("A simple house has a square wall with a brown door and a small window, and a red triangular roof "
              "on top, standing on green grass.", _draw_house),
}


def _v2_text_image(w: _Seed2Writer, n: int) -> None:
    """Dim 27: what does X look like; 4 text choices, each with its own option image (A-D)."""
    rng = w.rng
    for subject in rng.sample(sorted(CREATIONS), n):
        text, draw = CREATIONS[subject]
        wrong = [(rng.choice(list(COLOURS)), k) for k in rng.sample(SHAPES, 3)]
        options = [(text, None)] + [(f"A {subject} is just a single {c} {k} and nothing else.", (c, k)) for c, k in wrong]
        rng.shuffle(options)
        ids = []
        for opt_text, shape in options:
            img, d = _canvas()
            if shape is None:
                draw(d)
            else:
                _shape(d, shape[1], 112, 112, 60, COLOURS[shape[0]])
            name = w.name(lambda r: f"{r.randint(1690000000, 1699999999)}_{r.randint(1000000, 9999999)}.jpg")
            ids.append(w.save(img, f"task27/original/{name}"))
        right = [t for t, _ in options].index(text)
        qid = w.add(27, f"What does a {subject} look like?", [t for t, _ in options], LETTERS[right], ids)
        w.generated_image(qid, ids[right])


# --------------------------------------------------------------------------- entry points


def make_seed_demo(out_dir, seed: int = SEED) -> dict:
    """Write the SEED-Bench v1 (36 questions) and SEED-Bench-2 (54 questions) demo sets.

    Returns ``{"seed": {annotation_file, image_root, video_roots, video_codecs},
    "seed2": {annotation_file, cc3m_dir, seed_bench_v2_dir, generated_dir}}`` (strings).
    """
    out = Path(out_dir)
    v1_paths, v1_records = _make_seed1(out / "seed", random.Random(seed))
    v2_paths = _make_seed2(out / "seed2", random.Random(seed + 1), v1_records, v1_paths)
    return {"seed": v1_paths, "seed2": v2_paths}


# --------------------------------------------------------------------------- MMMU and CMMMU
# Spec §3.1 (MMMU HF parquet, one folder per subject) and §4.1 (CMMMU official JSONL layout, plus
# the HF parquet layout). Every image is large black text (or a labelled bar chart) on white,
# so OCR (tesseract eng / chi_sim) can read the answer off it.

MMMU_SUBJECTS = {  # subject -> (subfield, validation templates)
    "Accounting": ("Financial Accounting", ("expr_mc", "chart_open", "chart_mc")),
    "Art": ("Drawing and Painting", ("word_mc", "option_images", "word_open")),
    "Computer_Science": ("Data Structure and Algorithm", ("expr_mc", "word_mc", "two_images")),
    "Electronics": ("Analog electronics", ("chart_mc", "expr_mc", "fraction_open")),
    "History": ("Modern History", ("word_mc", "chart_mc", "expr_mc")),
    "Math": ("Calculus", ("expr_mc", "chart_open", "word_mc")),
    "Pharmacy": ("Pharmacology and Drug Synthesis", ("chart_mc", "word_mc", "expr_mc")),
    "Physics": ("Classical Mechanics", ("expr_mc", "chart_mc", "word_mc")),
}
MMMU_COLUMNS = ("id", "question", "options", "explanation", *(f"image_{k}" for k in range(1, 8)), "img_type", "answer",
                "topic_difficulty", "question_type", "subfield")
DIFFICULTIES = ("Easy", "Medium", "Hard")
CHART_LABELS = ("P", "Q", "R", "S")
WHITE = (255, 255, 255)


def _png(img: Image.Image) -> bytes:
    import io

    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _text_image(lines, font, size=(360, 150)) -> Image.Image:
    """Black text lines, centred, on white: OCR-friendly."""
    img = Image.new("RGB", size, WHITE)
    d = ImageDraw.Draw(img)
    step = size[1] / (len(lines) + 1)
    for i, line in enumerate(lines, start=1):
        d.text((size[0] / 2, step * i), line, font=font, fill=(0, 0, 0), anchor="mm")
    return img


def _labelled_bars(labels, values, font, value_font) -> Image.Image:
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


def _mc_options(rng: random.Random, correct: str, pool, n: int = 4) -> tuple[list[str], str]:
    others = [p for p in dict.fromkeys(pool) if p != correct]
    opts = [correct] + rng.sample(others, n - 1)
    rng.shuffle(opts)
    return opts, "ABCDEFGHI"[opts.index(correct)]


def _mmmu_item(rng: random.Random, kind: str, qid: str) -> dict:
    """One HF row (without id/split bookkeeping) for a template ``kind``."""
    big, mid = _font(64), _font(44)
    row = {f"image_{k}": None for k in range(1, 8)}
    row.update(explanation="", question_type="multiple-choice", img_type="['Other']")
    if kind == "expr_mc":
        v = rng.randint(11, 99)
        row["image_1"] = _text_image([f"x = {v}"], big)
        opts, ans = _mc_options(rng, str(v), [str(v + k) for k in (-11, -2, 3, 7, 10, 20)])
        row.update(question="<image 1> What is the value of x?", options=repr(opts), answer=ans,
                   img_type="['Mathematical Notations']", explanation=f"The image reads x = {v}.")
    elif kind in ("word_mc", "word_open"):
        word = rng.choice(WORDS)
        row["image_1"] = _text_image([word], big, size=(420, 150))
        row["question"] = "Which word is written in <image 1>?"
        if kind == "word_mc":
            opts, ans = _mc_options(rng, word, WORDS)
            row.update(options=repr(opts), answer=ans, explanation=f"The image shows the word {word}.")
        else:
            row.update(options="[]", answer=word.capitalize(), question_type="open")
    elif kind in ("chart_mc", "chart_open"):
        values = rng.sample(range(2, 10), 4)
        row["image_1"] = _labelled_bars(CHART_LABELS, values, mid, mid)
        row["img_type"] = "['Plots and Charts']"
        if kind == "chart_mc":
            opts = list(CHART_LABELS)
            row.update(question="According to the bar chart in <image 1>, which bar has the largest value?",
                       options=repr(opts), answer="ABCD"[values.index(max(values))])
        else:
            k = rng.randrange(4)
            row.update(question=f"What is the value of bar {CHART_LABELS[k]} in <image 1>?", options="[]",
                       answer=str(values[k]), question_type="open")
    elif kind == "fraction_open":
        row["image_1"] = _text_image(["3/4"], big)
        row.update(question="Which number is written in <image 1>? Give it as a fraction or a decimal.", options="[]",
                   answer=repr(["3/4", "0.75"]), question_type="open", img_type="['Mathematical Notations']")
    elif kind == "two_images":
        a, b = rng.randint(2, 19), rng.randint(20, 60)
        row["image_1"] = _text_image([f"a = {a}"], big)
        row["image_2"] = _text_image([f"b = {b}"], big)
        opts, ans = _mc_options(rng, str(b - a), [str(b - a + k) for k in (-10, -1, 1, 2, 10)])
        row.update(question="<image 2> shows b and <image 1> shows a. What is b - a?", options=repr(opts), answer=ans,
                   img_type="['Mathematical Notations']")
    elif kind == "option_images":
        word, other = rng.sample(WORDS, 2)
        row["image_1"] = _text_image([word], big, size=(420, 150))
        pair = [word, other]
        rng.shuffle(pair)
        row["image_2"] = _text_image([pair[0]], big, size=(420, 150))
        row["image_3"] = _text_image([pair[1]], big, size=(420, 150))
        row.update(question="<image 1> shows a word. Which option shows the same word?",
                   options=repr(["<image 2>", "<image 3>", "None of them"]), answer="AB"[pair.index(word)])
    else:
        raise ValueError(kind)
    row["id"] = qid
    return row


def _hf_parquet(path: Path, rows: list[dict], columns, image_columns, int_columns=()) -> None:
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
                v = {"bytes": _png(v) if isinstance(v, Image.Image) else v, "path": None}
            values.append(v)
        data[col] = values
    table = pa.Table.from_pydict(data, schema=pa.schema(fields, metadata=meta))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def make_mmmu_demo(out_dir, seed: int = SEED + 2) -> dict:
    """MMMU demo in the hub layout: ``<out_dir>/<Subject>/{dev,validation,test}-00000-of-00001.parquet``.

    8 subjects covering all 6 disciplines; validation 3 items each (20 multiple choice, 4 open:
    two numeric, one word, one list-string gold ``"['3/4', '0.75']"``; one item with two images
    referenced as ``<image 2>`` then ``<image 1>``; one with images as options), dev 1 each with
    an explanation, test 1 each with answer ``"?"`` (withheld). Spec §3.1.
    """
    out = Path(out_dir)
    rng = random.Random(seed)
    counts = {}
    for s_index, (subject, (subfield, kinds)) in enumerate(MMMU_SUBJECTS.items()):
        plan = {"dev": ("expr_mc",), "validation": kinds, "test": ("word_mc",)}
        for split, split_kinds in plan.items():
            rows = []
            for n, kind in enumerate(split_kinds, start=1):
                row = _mmmu_item(rng, kind, f"{split}_{subject}_{n}")
                row.update(subfield=subfield, topic_difficulty=DIFFICULTIES[(s_index + n) % 3])
                if split != "dev":
                    row["explanation"] = ""
                if split == "test":
                    row["answer"] = "?"
                rows.append(row)
            _hf_parquet(out / subject / f"{split}-00000-of-00001.parquet", rows, MMMU_COLUMNS,
                        {f"image_{k}" for k in range(1, 8)})
            counts[split] = counts.get(split, 0) + len(rows)
    return {"source": str(out), "subjects": list(MMMU_SUBJECTS), "splits": list(counts), "counts": counts}


#: the CJK font the CMMMU demo draws with: Noto Sans CJK (OFL) from the PyPI wheel
#: ``cvttf-NotoSansCJK-Regular`` (a dependency), never a system font, so the demo's bytes do not
#: depend on the machine's fonts
CJK_FONT_PACKAGE, CJK_FONT_FILE = "cvttf_NotoSansCJK_Regular", "NotoSansCJKtc-Regular.otf"


def cjk_font_path() -> str | None:
    """The pinned CJK font shipped by ``cvttf-NotoSansCJK-Regular``, or None when that package is not
    installed (the demo then draws Latin transliterations and the Chinese-text tests skip)."""
    import importlib.util

    spec = importlib.util.find_spec(CJK_FONT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / CJK_FONT_FILE
    return str(path) if path.is_file() else None


CMMMU_PLAN = {  # category folder -> [(subcategory, kind), ...] for val; dev/test add one each
    "art_and_design": [("设计", "mc_value"), ("艺术", "tf_word"), ("设计", "fill_word")],
    "business": [("会计", "mc_multi"), ("经济", "tf_chart"), ("管理", "mc_value"), ("会计", "fill_sum")],
    "science": [("数学", "mc_value"), ("物理", "mc_option_images"), ("数学", "tf_word"), ("物理", "fill_sum")],
    "health_and_medicine": [("制药", "mc_value"), ("临床医学", "tf_chart"), ("制药", "fill_word")],
    "humanities_and_social_sciences": [("历史", "mc_value"), ("心理学", "tf_word"), ("历史", "fill_sum")],
    "technology_and_engineering": [("计算机科学", "mc_multi"), ("电子学", "tf_word"), ("计算机科学", "fill_word")],
}
CN_WORDS = (("北京", "BEIJING"), ("长城", "GREAT WALL"), ("熊猫", "PANDA"), ("黄河", "HUANG HE"), ("上海", "SHANGHAI"))
CN_LABELS = (("甲", "JIA"), ("乙", "YI"), ("丙", "BING"))
IMG_TYPES_CN = {"mc": "公式", "tf_chart": "图表", "word": "其他"}


class _CmmmuWriter:
    """Collects one split's records and image files for the official layout (and the HF copy)."""

    def __init__(self, root: Path, zh_font: str | None):
        self.root, self.zh_font = root, zh_font
        self.images: dict[str, Image.Image] = {}

    def font(self, size: int):
        return ImageFont.truetype(self.zh_font, size) if self.zh_font else _font(size)

    def text(self, zh: str, latin: str, size=(420, 150)) -> Image.Image:
        """Chinese text with a CJK font; the Latin fallback without one (README says which)."""
        return _text_image([zh if self.zh_font else latin], self.font(64), size)


def _cmmmu_record(w: _CmmmuWriter, rng: random.Random, qid: int, category: str, subcategory: str, kind: str) -> dict:
    q_img = f"q_{qid}_001.png"
    rec = {"id": qid, "type": None, "source_type": "demo", "source": "mmbench demo", "question": None}
    rec.update({f"option{i}": None for i in range(1, 5)})
    rec.update(answer=None, analysis=None, distribution="本科", difficulty_level=("easy", "middle", "hard")[qid % 3],
               img_list=[q_img], category=category, subcategory=subcategory, subfield=[subcategory + "基础"],
               img_type=[IMG_TYPES_CN["word"]])
    if kind == "mc_value":
        v = rng.randint(11, 99)
        w.images[q_img] = _text_image([f"x = {v}"], _font(64), (360, 150))
        opts, ans = _mc_options(rng, str(v), [str(v + k) for k in (-11, -2, 3, 7, 10, 20)])
        rec.update(type="选择", question=f'<img="{q_img}">图中 x 的值是多少？', answer=ans, img_type=[IMG_TYPES_CN["mc"]])
        rec.update({f"option{i}": o for i, o in enumerate(opts, start=1)})
    elif kind == "mc_multi":
        nums = ["12", "7", "30", "9"]  # even numbers are options A and C: a multi-letter gold "AC"
        w.images[q_img] = _text_image(["   ".join(nums)], _font(56), (480, 150))
        rec.update(type="选择", question=f'<img="{q_img}">图中哪些数是偶数？', answer="AC", img_type=[IMG_TYPES_CN["mc"]])
        rec.update({f"option{i}": o for i, o in enumerate(nums, start=1)})
    elif kind == "mc_option_images":
        (zh, latin), (zh2, latin2) = rng.sample(CN_WORDS, 2)
        names = [f"a_{qid}_00{i}.png" for i in (1, 2)]
        w.images[q_img] = w.text(zh, latin)
        order = [(zh, latin), (zh2, latin2)]
        rng.shuffle(order)
        for name, (z, lt) in zip(names, order):
            w.images[name] = w.text(z, lt)
        rec.update(type="选择", question=f'<img="{q_img}">哪个选项中的图片与题目中的图片写着相同的词语？',
                   answer="AB"[order.index((zh, latin))], img_list=[q_img, *names])
        rec.update(option1=f'<img="{names[0]}">', option2=f'<img="{names[1]}">', option3="都不是", option4="无法判断")
    elif kind == "tf_word":
        (zh, latin), (zh2, _) = rng.sample(CN_WORDS, 2)
        w.images[q_img] = w.text(zh, latin)
        claim_true = qid % 2 == 0
        rec.update(type="判断", question=f'<img="{q_img}">图中写的词语是“{zh if claim_true else zh2}”。',
                   answer="对" if claim_true else "错")
    elif kind == "tf_chart":
        values = rng.sample(range(2, 10), 3)
        labels = [zh if w.zh_font else latin for zh, latin in CN_LABELS]
        w.images[q_img] = _labelled_bars(labels, values, w.font(44), _font(44))
        k = rng.randrange(3)
        rec.update(type="判断", question=f'<img="{q_img}">图中{CN_LABELS[k][0]}的数值最大。',
                   answer="对" if values[k] == max(values) else "错", img_type=[IMG_TYPES_CN["tf_chart"]])
    elif kind == "fill_sum":
        a, b = rng.randint(2, 40), rng.randint(2, 40)
        w.images[q_img] = _text_image([f"{a} + {b} = ?"], _font(64), (420, 150))
        rec.update(type="填空", question=f'<img="{q_img}">图中算式的结果是___。', answer=str(a + b), img_type=[IMG_TYPES_CN["mc"]])
    elif kind == "fill_word":
        zh, latin = rng.choice(CN_WORDS)
        w.images[q_img] = w.text(zh, latin)
        rec.update(type="填空", question=f'<img="{q_img}">图中写的词语是___。', answer=zh if w.zh_font else latin)
    else:
        raise ValueError(kind)
    return rec


def make_cmmmu_demo(out_dir, seed: int = SEED + 3) -> dict:
    """CMMMU demo: the official layout ``<out_dir>/cmmmu-data-{dev,val,test}/<category>/<category>.jsonl``
    with image files beside each file, and the same records in the HF layout under
    ``<out_dir>/hf/<category>/{dev,val,test}-00000-of-00001.parquet`` (spec §4.1).

    val: 3-4 items per category (选择 incl. the multi-letter gold "AC" and option images, 判断 对/错,
    填空); dev: one 选择 per category with ``analysis``; test: one item per category without
    ``answer``/``analysis``. Chinese text is drawn with the pinned CJK font (see ``cjk_font_path``), else its
    Latin transliteration.
    """

    folder_to_category = {f: c for c, f in CATEGORY_FOLDER.items()}
    out = Path(out_dir)
    rng = random.Random(seed)
    zh_font = cjk_font_path()
    next_id = 10001
    counts: dict[str, int] = {}
    hf_columns = ("id", "type", "source_type", "source", "question", "option1", "option2", "option3", "option4",
                  "answer", "analysis", "distribution", "difficulty_level", "subcategory", "category", "subfield",
                  "img_type", *(f"image_{i}_filename" for i in range(1, 6)), *(f"image_{i}" for i in range(1, 6)))
    for split in ("dev", "val", "test"):
        for folder, plan in CMMMU_PLAN.items():
            category = folder_to_category[folder]
            if split == "dev":
                plan = [(plan[0][0], "mc_value")]
            elif split == "test":
                plan = [(plan[-1][0], plan[-1][1])]
            w = _CmmmuWriter(out / f"cmmmu-data-{split}" / folder, zh_font)
            records = []
            for subcategory, kind in plan:
                rec = _cmmmu_record(w, rng, next_id, category, subcategory, kind)
                next_id += 1
                if split == "dev":
                    rec["analysis"] = "图中直接写出了 x 的值。"
                if split == "test":
                    rec.pop("answer")
                    rec.pop("analysis")
                records.append(rec)
            w.root.mkdir(parents=True, exist_ok=True)
            for name, img in w.images.items():
                _save(img, w.root / name)
            (w.root / f"{folder}.jsonl").write_text(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
            hf_rows = []
            for r in records:
                row = {k: v for k, v in r.items() if k != "img_list"}
                row["subfield"], row["img_type"] = repr(r["subfield"]), repr(r["img_type"])
                for i, name in enumerate(r["img_list"], start=1):
                    row[f"image_{i}_filename"], row[f"image_{i}"] = name, w.images[name]
                hf_rows.append(row)
            _hf_parquet(out / "hf" / folder / f"{split}-00000-of-00001.parquet", hf_rows, hf_columns,
                        {f"image_{i}" for i in range(1, 6)}, int_columns={"id"})
            counts[split] = counts.get(split, 0) + len(records)
    return {"root": str(out), "hf_root": str(out / "hf"), "splits": list(counts), "counts": counts,
            "cjk_font": zh_font}


def make_demo(out_dir, seed: int = SEED) -> dict:
    """Write every demo set under ``out_dir`` plus ``out_dir/README.md``; returns their paths by benchmark."""
    out = Path(out_dir)
    paths = make_seed_demo(out, seed)
    paths["mmmu"] = make_mmmu_demo(out / "mmmu", seed + 2)
    paths["cmmmu"] = make_cmmmu_demo(out / "cmmmu", seed + 3)
    font = paths["cmmmu"]["cjk_font"]
    readme = README_SEED.format(codecs=paths["seed"]["video_codecs"]) + README_MMMU_CMMMU.format(
        font=f"the CJK font `{Path(font).name}` (PyPI `cvttf-NotoSansCJK-Regular`)" if font
        else "no CJK font (`cvttf-NotoSansCJK-Regular` not installed): their Latin transliterations")
    (out / "README.md").write_text(readme, encoding="utf-8")
    return paths


README_SEED = """# mmbench demo data

Small, procedurally drawn demo sets in the exact official layouts, written by
`mmbench_lib.demo.make_demo`. Every question has a right answer that can be read off the
pixels (shapes to count, colours, positions, rendered words, motion, colour cycles), and the
files are byte-for-byte deterministic for a given seed.

## SEED-Bench v1 (`seed/`), 36 questions: 3 per dimension 1-12

    seed/SEED-Bench.json                  {{"questions": [...], "question_type": {{name: id}}}}
    seed/cc3m/<data_id>                   images (JPEG), no file extension, flat folder (dims 1-9)
    seed/videos/ssv2/<id>.webm            dim 10, whole clip, 12 fps
    seed/videos/epic_kitchens/P01/P01_11.MP4   dim 11, 30 fps, `segment` in seconds (floats)
    seed/videos/breakfast/P03/cam01/P03_cereals.avi   dim 12, 15 fps, `segment` in frame numbers (ints)

Video question ids carry a `v` prefix. Video encoders used: {codecs}.
Dim 11 clips cycle through 3 colours (0.5 s each); the answer is the colour that follows the
segment. Dim 12 clips draw shapes one at a time inside the segment; one segment ends past the
last frame, as the official `min(end, len)` rule allows.

Load with `seed1.load(annotation_file, image_root, video_roots)`.

## SEED-Bench-2 (`seed2/`), 54 questions: 2 per dimension 1-27

    seed2/SEED-Bench_v2_level1_2_3.json   {{"questions": [...], "question_type": {{name: id}}}}
    seed2/cc3m/<data_id>                  data_source "cc3m" (dims 1-8, first dim-9 item)
    seed2/SEED-Bench-v2/task17/SD_image/SD_IMG_<n>_1.png, _2.png
    seed2/SEED-Bench-v2/task19/Charades_test_frame/<vid>/1.png .. 8.png
    seed2/SEED-Bench-v2/task23/ICL_images/<group>/1.jpg .. 3.jpg   (`<img>` markers, one per image)
    seed2/SEED-Bench-v2/task25/image/<k>/1.jpg .. 4.jpg            (choices "1.jpg" .. "4.jpg")
    seed2/SEED-Bench-v2/task26/kitchen_start_end_frame/v<n>/1.png  (3 context + 4 options; choices "v2799/2.png")
    seed2/SEED-Bench-v2/task27/original/<name>.jpg                 (4 option images, A-D)
    seed2/generated/<question_id>.png     a stand-in "model output" for dims 25-27: a perturbed
                                          copy of the right option image, for CLIP scoring

The folders above follow the official DATASET.md examples. The official file names for
dims 9-16, 18, 20-22 and 24 are not public; the demo uses `task<N>/<source>/...` there.
Dims 1-8 and 20-22 are inherited from the v1 demo (`version` "v1"): dims 20-22 are the 8 frames
the official v1 sampler picks from the v1 videos. Every other item has `version` "v2".

Load with `seed2.load(annotation_file, cc3m_dir, seed_bench_v2_dir, level="L3")`.
"""


README_MMMU_CMMMU = """
## MMMU (`mmmu/`), the hub layout of `MMMU/MMMU` (spec §3.1)

    mmmu/<Subject>/{{dev,validation,test}}-00000-of-00001.parquet

8 subjects, all 6 disciplines: Accounting, Art, Computer_Science, Electronics, History, Math,
Pharmacy, Physics. validation: 3 per subject (20 multiple choice, 4 open, one of them with the
list-string gold `"['3/4', '0.75']"`; `validation_Computer_Science_3` refers to `<image 2>`
before `<image 1>`; `validation_Art_2` has images as options). dev: 1 per subject with an
explanation. test: 1 per subject, answer `"?"`. `options` and `img_type` are Python-list
strings; image cells are `{{bytes, path}}` structs declared as `Image` features.

Load with `mmmu.load("<demo>/mmmu", split="validation")`.

## CMMMU (`cmmmu/`), the official repository layout (spec §4.1)

    cmmmu/cmmmu-data-{{dev,val,test}}/<category>/<category>.jsonl   + q_<id>_001.png, a_<id>_00k.png beside it
    cmmmu/hf/<category>/{{dev,val,test}}-00000-of-00001.parquet       the same records in the HF layout

val: 20 items over the 6 categories: 选择 (two with the multi-letter gold "AC", one with option
images), 判断 (对/错) and 填空. dev: one 选择 per category with `analysis`; test: one item per
category without `answer`. Chinese text in the images is drawn with {font}.

Load with `cmmmu.load("<demo>/cmmmu", split="val")` or `cmmmu.load("<demo>/cmmmu/hf", split="val")`.
"""


DEMO_VERSION = 3  # bump when the generator's output changes


def ensure_demo(data_dir="data/demo", force: bool = False) -> dict:
    """The demo sets under ``data_dir`` (relative paths are from the repository root), built
    if missing or made by another generator version; returns their paths by benchmark."""
    import json


    out = resolve(data_dir)
    stamp = out / "paths.json"
    if stamp.is_file() and not force:
        saved = json.loads(stamp.read_text(encoding="utf-8"))
        if saved.get("version") == DEMO_VERSION and Path(saved["paths"]["seed"]["annotation_file"]).is_file():
            return saved["paths"]
    paths = make_demo(out)
    stamp.write_text(json.dumps({"version": DEMO_VERSION, "paths": paths}, indent=2, default=str), encoding="utf-8")
    return json.loads(json.dumps(paths, default=str))
