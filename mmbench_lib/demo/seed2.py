"""SEED-Bench-2 demo: ``SEED-Bench_v2_level1_2_3.json`` with its ``cc3m`` and ``SEED-Bench v2`` roots,
``<img>`` markers and option images for dims 25-27 (docs/protocols.md §2.1-2.2)."""
from __future__ import annotations

import math
import random
import shutil
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from mmbench_lib.core.video import read_video_frames
from mmbench_lib.demo.draw import (COLOURS, INK, LETTERS, NUMBERS, SHAPES, SIZE, canvas, draw_shape, draw_text, grid_cells,
                                   pick_options, save_image, unique_name, write_json)
from mmbench_lib.demo.seed1 import cc3m_name, q_text
from mmbench_lib.tasks import seed1 as seed1_task, seed2 as seed2_task


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


def _a(word: str) -> str:
    """``word`` with its indefinite article ("a red", "an orange")."""
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


# --------------------------------------------------------------------------- image questions

NAMES = ("Alice Moreau", "Bruno Tanaka", "Carla Jensen", "David Okafor", "Elena Rossi", "Farid Haddad")


def q_celebrity(rng):
    """SEED-2 dim 10: a face with a name badge; who is it."""
    name = rng.choice(NAMES)
    img, d = canvas()
    _face(d, 112, 85, 60, rng.choice(["happy", "surprised"]))
    d.rectangle((12, 165, 212, 205), fill=(255, 255, 255), outline=INK, width=2)
    draw_text(d, 112, 185, name, 22)
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
    img, d = canvas()
    _landmark(d, kind)
    return img, "Which landmark is shown in the image?", kind, kinds


def q_chart(rng):
    """SEED-2 dim 12: a labelled bar chart; which bar is highest."""
    start = rng.randint(0, 3)
    days = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[start:start + 4]
    values = rng.sample(range(2, 10), 4)
    img, d = canvas(bg=(255, 255, 255))
    d.line((20, 190, 210, 190), fill=INK, width=2)
    d.line((20, 20, 20, 190), fill=INK, width=2)
    for i, (day, v) in enumerate(zip(days, values)):
        x0 = 32 + i * 46
        d.rectangle((x0, 190 - v * 18, x0 + 32, 190), fill=(60, 110, 200))
        draw_text(d, x0 + 16, 205, day, 16)
        draw_text(d, x0 + 16, 180 - v * 18, str(v), 14)
    best = days[values.index(max(values))]
    return img, "Which day has the highest value in the bar chart?", best, days


def q_referring(rng):
    """SEED-2 dim 13: four shapes, a red box around one; what is inside the box."""
    kinds = rng.sample(SHAPES, 4)
    pts = grid_cells(rng, 4, grid=3, jitter=0)
    colours = [c for c in COLOURS if c != "red"]
    img, d = canvas()
    for kind, (cx, cy) in zip(kinds, pts):
        draw_shape(d, kind, cx, cy, 20, COLOURS[rng.choice(colours)])
    cx, cy = pts[0]
    d.rectangle((cx - 30, cy - 30, cx + 30, cy + 30), outline=COLOURS["red"], width=3)
    return img, "What is the object inside the red box?", f"A {kinds[0]}", [f"A {k}" for k in kinds]


def q_magnets(rng):
    """SEED-2 dim 14: two bar magnets; attract (unlike poles facing) or repel."""
    left, right = rng.choice(["NS", "SN"]), rng.choice(["NS", "SN"])
    img, d = canvas()
    for x0, poles in ((14, left), (126, right)):
        for j, pole in enumerate(poles):
            colour = COLOURS["red"] if pole == "N" else COLOURS["blue"]
            d.rectangle((x0 + j * 42, 92, x0 + j * 42 + 42, 132), fill=colour, outline=INK, width=2)
            draw_text(d, x0 + j * 42 + 21, 112, pole, 26, fill=(255, 255, 255))
    answer = "Repel" if left[1] == right[0] else "Attract"
    pool = ("Attract", "Repel", "Neither, magnets do not affect each other", "It depends on the colour of the magnets")
    return img, "Will these magnets attract or repel each other?", answer, pool


def q_emotion(rng):
    """SEED-2 dim 15: a cartoon face; which emotion."""
    emotion = rng.choice(["happy", "sad", "surprised", "angry"])
    img, d = canvas()
    _face(d, 112, 112, 80, emotion)
    return img, "What emotion does the face in the image show?", emotion.capitalize(), ("Happy", "Sad", "Surprised", "Angry")


def q_math(rng):
    """SEED-2 dim 16: a rendered arithmetic expression; its value."""
    a, b = rng.randint(2, 12), rng.randint(2, 9)
    op = rng.choice("+-x")
    if op == "-" and a < b:
        a, b = b, a
    value = a + b if op == "+" else a - b if op == "-" else a * b
    img, d = canvas(bg=(255, 255, 255))
    draw_text(d, SIZE / 2, SIZE / 2, f"{a} {op} {b} = ?", 40)
    pool = [str(value + k) for k in (0, 1, -1, 2, -2, 10)]
    return img, "What is the value of the expression in the image?", str(value), pool

V2_IMAGE_QUESTIONS = {9: q_text, 10: q_celebrity, 11: q_landmark, 12: q_chart, 13: q_referring,
                      14: q_magnets, 15: q_emotion, 16: q_math}
V2_IMAGE_FOLDERS = {9: "task9/text_image", 10: "task10/celebrity", 11: "task11/landmark", 12: "task12/plotqa",
                    13: "task13/vcr", 14: "task14/scienceqa", 15: "task15/fer2013", 16: "task16/math"}


# --------------------------------------------------------------------------- the annotation file and media

V2_DATA_TYPE = {**{d: "Single Image" for d in range(1, 17)}, 17: "Multiple Images", 18: "Multiple Images",
                **{d: "Video" for d in range(19, 23)}, 23: "Interleaved Image", 24: "Interleaved Image",
                25: "Image Generation", 26: "Image Generation", 27: "Image & Text Generation"}
#: official ``question_type`` names (SEED-Bench-2 DATASET.md): id 9 is "Text Understanding" there
V2_TYPE_NAMES = {d: ("Text Understanding" if d == 9 else name) for d, (name, _, _) in seed2_task.DIMENSIONS.items()}


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
        _, subpart, level = seed2_task.DIMENSIONS[dim]
        rec = {"answer": answer}
        rec.update({f"choice_{c}": t for c, t in zip("abcd", choices)})
        rec.update({"data_id": data_id, "data_source": source, "data_type": V2_DATA_TYPE[dim], "level": level,
                    "question": question, "question_id": qid, "question_type_id": dim, "subpart": subpart,
                    "version": "v1" if dim <= 8 or 20 <= dim <= 22 else "v2"})
        self.records.append(rec)
        return qid

    def save(self, img: Image.Image, rel: str) -> str:
        save_image(img, self.v2 / rel)
        return rel

    def name(self, make) -> str:
        return unique_name(self.rng, self.used, make)

    def generated_image(self, qid: str, correct_rel: str) -> None:
        """A slightly perturbed copy of the right option image, as if a model had generated it."""
        arr = np.asarray(Image.open(self.v2 / correct_rel).convert("RGB")).astype(np.int16)
        noise = np.random.default_rng(self.rng.randrange(2**32)).integers(-12, 13, size=arr.shape)
        arr = np.roll(arr, (2, 3), axis=(0, 1)) * 0.95 + noise
        save_image(Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)), self.generated / f"{qid}.png")


def make_seed2(root: Path, rng: random.Random, v1: list[dict], v1_paths: dict, per_dim: int = 2) -> dict:
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
    write_json(root / "SEED-Bench_v2_level1_2_3.json", {"questions": w.records, "question_type": qtypes})
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
            choices, answer = pick_options(w.rng, correct, pool)
            if dim == 9 and k == 0:
                data_id = w.name(cc3m_name)
                save_image(img, w.cc3m / data_id)
                w.add(dim, question, choices, answer, data_id, source="cc3m")
                continue
            ext = ".png" if dim in (12, 14, 16) else ".jpg"
            rel = w.save(img, f"{V2_IMAGE_FOLDERS[dim]}/{w.name(lambda r: str(r.randint(100, 99999)))}{ext}")
            w.add(dim, question, choices, answer, rel)


def _draw_layout(layout) -> Image.Image:
    img, d = canvas()
    for kind, colour, (cx, cy) in layout:
        draw_shape(d, kind, cx, cy, 22, COLOURS[colour])
    return img


def _v2_difference(w: _Seed2Writer, n: int) -> None:
    """Dim 17: two images; one shape is removed or recoloured in the right one."""
    rng = w.rng
    for _ in range(n):
        kinds, colours = rng.sample(SHAPES, 4), rng.sample(list(COLOURS), 4)
        layout = list(zip(kinds, colours, grid_cells(rng, 4, grid=3, jitter=0)))
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
            img, d = canvas(bg=(255, 255, 255))
            draw_text(d, 112, 24, cap, 24)
            _face(d, 112, 130, 70, emo)
            ids.append(w.save(img, f"task18/meme/{group}_{j + 1}.png"))

        def say(a, b):
            return f"{a.capitalize()} about {caps[0].lower()}, {b} about {caps[1].lower()}"

        correct = say(e1, e2)
        pool = [correct, say(e2, e1), say(e1, e1), say(e2, e2), say(e3, e2), say(e1, e3)]
        choices, answer = pick_options(rng, correct, pool)
        w.add(18, "Which feelings does this two-panel meme express?", choices, answer, ids)


CHARADES_EVENTS = ("rolls from left to right", "rolls from right to left", "falls from the top to the bottom", "grows bigger")


def _charades_frame(event: str, t: float, colour) -> Image.Image:
    img, d = canvas(128)
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
        choices, answer = pick_options(rng, f"{ball} {event}", [f"{ball} {e}" for e in CHARADES_EVENTS])
        w.add(19, "What happens in the video?", choices, answer, ids)


V2_VIDEO_FOLDERS = {20: "task20/SSv2_frame", 21: "task21/Epic_Kitchens_frame", 22: "task22/Breakfast_frame"}


def _inherit_v1_videos(w: _Seed2Writer, v1: list[dict], v1_paths: dict, n: int) -> None:
    """Dims 20-22: the SEED-Bench-1 video questions, shipped as the 8 frames of the official sampler."""

    for dim, v1_dim in ((20, 10), (21, 11), (22, 12)):
        root = Path(v1_paths["video_roots"][seed1_task.VIDEO_SOURCES[v1_dim]])
        for rec in _first(v1, v1_dim, n):
            frames = read_video_frames(root / rec["data_id"], seed1_task.VIDEO_RULES[v1_dim], rec.get("segment"))
            ids = [w.save(f, f"{V2_VIDEO_FOLDERS[dim]}/{rec['question_id']}/{i + 1}.png") for i, f in enumerate(frames)]
            w.add(dim, rec["question"], _choices_of(rec), rec["answer"], ids)


def _single_shape_image(kind: str, colour: str, count: int = 1, rng: random.Random | None = None) -> Image.Image:
    img, d = canvas()
    if count == 1:
        draw_shape(d, kind, 112, 112, 60, COLOURS[colour])
    else:
        for cx, cy in grid_cells(rng, count, grid=3, jitter=0):
            draw_shape(d, kind, cx, cy, 24, COLOURS[colour])
    return img


def _v2_in_context(w: _Seed2Writer) -> None:
    """Dim 23: two captioned examples, then a third image to caption (colour, then count)."""
    rng = w.rng
    kinds, colours = rng.sample(SHAPES, 3), rng.sample(list(COLOURS), 3)
    group = f"in_context_attribute_{w.name(lambda r: str(r.randint(0, 60)))}"
    ids = [w.save(_single_shape_image(k, c), f"task23/ICL_images/{group}/{i + 1}.jpg")
           for i, (k, c) in enumerate(zip(kinds, colours))]
    caps = [f"The {k} is {c}." for k, c in zip(kinds, colours)]
    choices, answer = pick_options(rng, caps[2], [f"The {kinds[2]} is {c}." for c in COLOURS])
    w.add(23, f"<img>: {caps[0]} <img>: {caps[1]} <img>:", choices, answer, ids)

    kind, colour = rng.choice(SHAPES), rng.choice(list(COLOURS))
    counts = rng.sample(range(2, 7), 3)
    group = f"in_context_count_{w.name(lambda r: str(r.randint(0, 60)))}"
    ids = [w.save(_single_shape_image(kind, colour, c, rng), f"task23/ICL_images/{group}/{i + 1}.jpg")
           for i, c in enumerate(counts)]
    caps = [f"There are {NUMBERS[c].lower()} {kind}s." for c in counts]
    choices, answer = pick_options(rng, caps[2], [f"There are {NUMBERS[c].lower()} {kind}s." for c in range(2, 8)])
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
            img, d = canvas()
            for j, (cx, cy) in enumerate(grid_cells(rng, c + 2)):
                draw_shape(d, "circle" if j < c else "square", cx, cy, 18, COLOURS[rng.choice(list(COLOURS))])
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
        choices, answer = pick_options(rng, correct, pool)
        w.add(24, q, choices, answer, ids)


def _two_shapes(top, bottom) -> Image.Image:
    img, d = canvas()
    draw_shape(d, top[1], 112, 60, 38, COLOURS[top[0]])
    draw_shape(d, bottom[1], 112, 166, 38, COLOURS[bottom[0]])
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
    img, d = canvas()
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
            if shape is None:
                img, d = canvas()
                draw(d)
            else:
                img = _single_shape_image(shape[1], shape[0])
            name = w.name(lambda r: f"{r.randint(1690000000, 1699999999)}_{r.randint(1000000, 9999999)}.jpg")
            ids.append(w.save(img, f"task27/original/{name}"))
        right = [t for t, _ in options].index(text)
        qid = w.add(27, f"What does a {subject} look like?", [t for t, _ in options], LETTERS[right], ids)
        w.generated_image(qid, ids[right])


README = """
## SEED-Bench-2 (`seed2/`), 54 questions: 2 per dimension 1-27

    seed2/SEED-Bench_v2_level1_2_3.json   {"questions": [...], "question_type": {name: id}}
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
