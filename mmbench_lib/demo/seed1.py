"""SEED-Bench v1 demo: ``SEED-Bench.json``, the flat CC3M folder and the SSv2 / Epic-Kitchens /
Breakfast video roots (docs/protocols.md §1.1-1.3), drawn from a seeded ``random.Random``."""
from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
from PIL import ImageDraw

from mmbench_lib.demo.draw import (COLOURS, INK, NUMBERS, SHAPES, SIZE, WORDS, canvas, draw_shape, draw_text, grid_cells,
                                   pick_options, save_image, unique_name, write_json)
from mmbench_lib.tasks import seed1 as seed1_task


def cc3m_name(rng: random.Random) -> str:
    """A CC3M-style image name (``<n>_<n>``, no extension)."""
    return f"{rng.randint(1000000, 3300000)}_{rng.randint(1000000000, 4200000000)}"


# --------------------------------------------------------------------------- image questions
# Each returns (image, question, correct choice, pool of choices incl. the correct one).


def q_scene(rng):
    """Dim 1: which kind of scene (beach, night sky, grassy field, snowy mountains)."""
    scenes = ("A beach", "A night sky", "A grassy field", "Snowy mountains")
    kind = rng.choice(scenes)
    img, d = canvas()
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
    img, d = canvas()
    draw_shape(d, kind, SIZE / 2, SIZE / 2, 70, COLOURS[rng.choice(list(COLOURS))])
    return img, "Which shape is shown in the image?", f"A {kind}", [f"A {s}" for s in SHAPES]


def q_attribute(rng):
    """Dim 3: colour of one named shape among three."""
    kinds = rng.sample(SHAPES, 3)
    colours = rng.sample(list(COLOURS), 3)
    img, d = canvas()
    for kind, colour, (cx, cy) in zip(kinds, colours, grid_cells(rng, 3, grid=3)):
        draw_shape(d, kind, cx, cy, 26, COLOURS[colour])
    return img, f"What colour is the {kinds[0]}?", colours[0].capitalize(), [c.capitalize() for c in COLOURS]


LOCATIONS = {"On the left": (45, 112), "On the right": (179, 112), "At the top": (112, 45), "At the bottom": (112, 179)}


def q_location(rng):
    """Dim 4: where one coloured shape is (left/right/top/bottom); a grey shape marks the centre."""
    where = rng.choice(list(LOCATIONS))
    kind, colour = rng.choice(SHAPES), rng.choice(list(COLOURS))
    img, d = canvas()
    draw_shape(d, rng.choice([s for s in SHAPES if s != kind]), 112, 112, 18, (150, 150, 150))
    draw_shape(d, kind, *LOCATIONS[where], 30, COLOURS[colour])
    return img, f"Where is the {colour} {kind} in the image?", where, list(LOCATIONS)


def q_counting(rng):
    """Dim 5: how many of one shape, with a few other shapes as distractors."""
    kind, other = rng.sample(SHAPES, 2)
    n, m = rng.randint(1, 6), rng.randint(0, 3)
    img, d = canvas()
    for i, (cx, cy) in enumerate(grid_cells(rng, n + m)):
        draw_shape(d, kind if i < n else other, cx, cy, 18, COLOURS[rng.choice(list(COLOURS))])
    return img, f"How many {kind}s are in the image?", NUMBERS[n], NUMBERS[1:8]


def q_spatial(rng):
    """Dim 6: where shape a is relative to shape b."""
    (ka, kb), (ca, cb) = rng.sample(SHAPES, 2), rng.sample(list(COLOURS), 2)
    rel = {f"To the left of the {kb}": (-75, 0), f"To the right of the {kb}": (75, 0),
           f"Above the {kb}": (0, -75), f"Below the {kb}": (0, 75)}
    answer = rng.choice(list(rel))
    bx, by = 112 + rng.randint(-10, 10), 112 + rng.randint(-10, 10)
    img, d = canvas()
    draw_shape(d, kb, bx, by, 24, COLOURS[cb])
    draw_shape(d, ka, bx + rel[answer][0], by + rel[answer][1], 24, COLOURS[ca])
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
        pts = grid_cells(rng, 3, grid=3, jitter=0)
        if math.dist(pts[0], pts[1]) > 100 and _dist_to_segment(pts[2], pts[0], pts[1]) > 40:
            break
    img, d = canvas()
    for kind, (cx, cy) in zip(kinds, pts):
        draw_shape(d, kind, cx, cy, 22, COLOURS[rng.choice(list(COLOURS))])
    _arrow(d, pts[0], pts[1], 30)
    q = f"An arrow starts at the {kinds[0]}. Which shape does the arrow point to?"
    return img, q, f"The {kinds[1]}", [f"The {s}" for s in SHAPES if s != kinds[0]]


def q_reasoning(rng):
    """Dim 8: which shape appears exactly once (the others appear 2-3 times)."""
    once, *rest = rng.sample(SHAPES, 3)
    kinds = [once] + [k for k in rest for _ in range(rng.randint(2, 3))]
    img, d = canvas()
    for kind, (cx, cy) in zip(kinds, grid_cells(rng, len(kinds))):
        draw_shape(d, kind, cx, cy, 18, COLOURS[rng.choice(list(COLOURS))])
    return img, "Which shape appears only once in the image?", f"The {once}", [f"The {s}" for s in SHAPES]


def q_text(rng):
    """Dim 9: a word rendered large, black on white (legible to OCR)."""
    word = rng.choice(WORDS)
    img, d = canvas(bg=(255, 255, 255))
    draw_text(d, SIZE / 2, SIZE / 2, word, 48)
    return img, "What word is written in the image?", word, WORDS


V1_IMAGE_QUESTIONS = {1: q_scene, 2: q_identity, 3: q_attribute, 4: q_location, 5: q_counting,
                      6: q_spatial, 7: q_interaction, 8: q_reasoning, 9: q_text}


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
        img, d = canvas(size)
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
        img, d = canvas(size, COLOURS[cycle[(i // EPIC_BLOCK) % len(cycle)]])
        d.rectangle((size // 2 - 6, size - 20, size // 2 + 6, size - 8), fill=(255, 255, 255))
        out.append(np.asarray(img))
    return out


BREAKFAST_FPS, BREAKFAST_LEN = 15, 60


def breakfast_frames(steps: list[str], segment: tuple[int, int], rng: random.Random, size: int = 96) -> list[np.ndarray]:
    """Shapes appear one by one inside ``segment`` (frame numbers) and stay (dim 12)."""
    start, end = segment[0], min(segment[1], BREAKFAST_LEN)
    appear = [start + k * (end - start) // len(steps) for k in range(len(steps))]
    places = grid_cells(rng, len(steps), grid=3, size=size, jitter=0)
    colours = rng.sample(list(COLOURS), len(steps))
    out = []
    for i in range(BREAKFAST_LEN):
        img, d = canvas(size)
        for kind, t, (cx, cy), c in zip(steps, appear, places, colours):
            if i >= t:
                draw_shape(d, kind, cx, cy, 11, COLOURS[c])
        out.append(np.asarray(img))
    return out


def _steps_text(order) -> str:
    return ", ".join(f"draw {k}" for k in order)


# --------------------------------------------------------------------------- the annotation file


def _v1_record(qid, dim, question, choices, answer, data_type, data_id, segment=None) -> dict:
    rec = {"answer": answer}
    rec.update({f"choice_{c}": t for c, t in zip("abcd", choices)})
    rec.update({"data_id": data_id, "data_type": data_type, "question": question,
                "question_id": qid, "question_type_id": dim})
    if segment is not None:
        rec["segment"] = list(segment)
    return rec


def make_seed1(root: Path, rng: random.Random, per_dim: int = 3) -> tuple[dict, list[dict]]:
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
            choices, answer = pick_options(rng, correct, pool)
            data_id = unique_name(rng, used_names, cc3m_name)
            save_image(img, cc3m / data_id)
            records.append(_v1_record(unique_name(rng, used_ids, qid_image), dim, question, choices, answer, "image", data_id))

    # dim 10: Something-Something v2, whole clip, 12 fps
    for action in rng.sample(list(SSV2_ACTIONS), per_dim):
        name = unique_name(rng, used_names, lambda r: f"{r.randint(1000, 220000)}.webm")
        codecs["ssv2"] = encode_video(vroots["ssv2"] / name, ssv2_frames(action, COLOURS[rng.choice(list(COLOURS))]), 12)
        choices, answer = pick_options(rng, action, SSV2_ACTIONS)
        records.append(_v1_record(unique_name(rng, used_ids, qid_video), 10, "What is the action being carried out in the video?",
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
        choices, answer = pick_options(rng, nxt, [c.capitalize() for c in EPIC_COLOURS])
        q = "The colours in this video repeat in a fixed cycle. Which colour will appear right after the end of this video?"
        records.append(_v1_record(unique_name(rng, used_ids, qid_video), 11, q, choices, answer, "video", v, segment))

    # dim 12: Breakfast, 15 fps, segment in frame numbers (the last one runs past the end)
    videos = ["P03/cam01/P03_cereals.avi", "P06/cam01/P06_milk.avi", "P15/webcam01/P15_tea.avi"]
    segments = [[6, 54], [0, 59], [15, 75]]
    for k in range(per_dim):
        v, seg = videos[k % 3], segments[k % 3]
        steps = rng.sample(["circle", "square", "triangle"], 3)
        codecs["breakfast"] = encode_video(vroots["breakfast"] / v, breakfast_frames(steps, seg, rng), BREAKFAST_FPS)
        pool = [_steps_text(p) for p in itertools.permutations(["circle", "square", "triangle"])]
        choices, answer = pick_options(rng, _steps_text(steps), pool)
        q = "Can you identify the sequence of actions in this video and list them in order?"
        records.append(_v1_record(unique_name(rng, used_ids, qid_video), 12, q, choices, answer, "video", v, seg))

    qtypes = {name: dim for dim, (name, _) in seed1_task.DIMENSIONS.items()}
    write_json(root / "SEED-Bench.json", {"questions": records, "question_type": qtypes})
    paths = {"annotation_file": str(root / "SEED-Bench.json"), "image_root": str(cc3m),
             "video_roots": {k: str(p) for k, p in vroots.items()}, "video_codecs": codecs}
    return paths, records


_README = """## SEED-Bench v1 (`seed/`), 36 questions: 3 per dimension 1-12

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
"""


def readme(paths: dict) -> str:
    """The SEED-Bench v1 section of the demo README, naming the video encoders ``make_seed1`` used."""
    return _README.format(codecs=paths["video_codecs"])
