"""SEED-Bench-2: ``SEED-Bench_v2_level1_2_3.json``, 27 dimensions in parts 1-3, levels L1-L3.

SEED-Bench-2 paper §3 (hierarchy, Table 1) and docs/protocols.md §2. Levels are cumulative as
in the official ``eval.py`` (L1 ⊂ L2 ⊂ L3); the subpart filter matches exactly (P-T5); dims
25-27 need image output and are N/A for models that cannot produce images (Table 2).
"""
from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

from mmbench_lib.core.items import DataError, Item
from mmbench_lib.tasks.base import AuditPart, Layout, register_task
from mmbench_lib.tasks.seed1 import SeedTask
from mmbench_lib.tasks._common import (choices_abcd, duplicate_choices, media_path, question_id_and_dimension, read_json,
                                       refuse_or_mark, require)
from mmbench_lib.tasks.copies import seed as copies

BENCHMARK = "seed2"

SINGLE, MULTI, VIDEO = "Single-Image & Text Comprehension", "Multiple-Images & Text Comprehension", "Video & Text Comprehension"
INTERLEAVED, IMGEN, IMTEXTGEN = "Interleaved Image & Text Comprehension", "Image Generation", "Image & Text Generation"
SUBPARTS = (SINGLE, MULTI, VIDEO, INTERLEAVED, IMGEN, IMTEXTGEN)

#: id -> (name, subpart, level). docs/protocols.md §2.2.
DIMENSIONS: dict[int, tuple[str, str, str]] = {
    1: ("Scene Understanding", SINGLE, "L1"),
    2: ("Instance Identity", SINGLE, "L1"),
    3: ("Instance Attributes", SINGLE, "L1"),
    4: ("Instance Location", SINGLE, "L1"),
    5: ("Instances Counting", SINGLE, "L1"),
    6: ("Spatial Relation", SINGLE, "L1"),
    7: ("Instance Interaction", SINGLE, "L1"),
    8: ("Visual Reasoning", SINGLE, "L1"),
    9: ("Text Recognition", SINGLE, "L1"),
    10: ("Celebrity Recognition", SINGLE, "L1"),
    11: ("Landmark Recognition", SINGLE, "L1"),
    12: ("Chart Understanding", SINGLE, "L1"),
    13: ("Visual Referring Expression", SINGLE, "L1"),
    14: ("Science Knowledge", SINGLE, "L1"),
    15: ("Emotion Recognition", SINGLE, "L1"),
    16: ("Visual Mathematics", SINGLE, "L1"),
    17: ("Difference Spotting", MULTI, "L1"),
    18: ("Meme Comprehension", MULTI, "L1"),
    19: ("Global Video Understanding", VIDEO, "L1"),
    20: ("Action Recognition", VIDEO, "L1"),
    21: ("Action Prediction", VIDEO, "L1"),
    22: ("Procedure Understanding", VIDEO, "L1"),
    23: ("In-Context Captioning", INTERLEAVED, "L2"),
    24: ("Interleaved Image-Text Analysis", INTERLEAVED, "L2"),
    25: ("Text-to-Image Generation", IMGEN, "L3"),
    26: ("Next Image Prediction", IMGEN, "L3"),
    27: ("Text-Image Creation", IMTEXTGEN, "L3"),
}
IMAGE_OUTPUT_DIMS = (25, 26, 27)
#: SEED-2 §3.4: dims 25-26 are answered by a generated image, dim 27 by text and an image
OUTPUT = {25: "image", 26: "image", 27: "text+image"}
PART_OF_LEVEL = {"L1": 1, "L2": 2, "L3": 3}
LEVELS = ("L1", "L2", "L3")
DATA_SOURCES = {"cc3m": "cc3m_dir", "SEED-Bench v2": "seed_bench_v2_dir"}

#: metric groups: name -> dimension ids (docs/protocols.md §2.5; levels cumulative)
GROUPS = {
    "Single-Image": tuple(range(1, 17)),
    "Multiple-Images": (17, 18),
    "Video": (19, 20, 21, 22),
    "Part-2 (Interleaved)": (23, 24),
    "Part-3 (Image output)": (25, 26, 27),
    "L1": tuple(range(1, 23)),
    "L2": tuple(range(1, 25)),
    "L3": tuple(range(1, 28)),
}

PROMPT = "Question: {question}\nAnswer:"

#: what the SEED-2 copies hold (``tasks/copies/seed.py``): one image per ``data_id`` entry
SHAPE = copies.SeedShape(BENCHMARK, "SEED-Bench_v2_level1_2_3.json", DIMENSIONS, per_data_id=True)


def levels_upto(level: str) -> tuple[str, ...]:
    """Official cumulative filter: L1 -> {L1}, L2 -> {L1, L2}, L3 -> {L1, L2, L3}."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; use L1, L2 or L3")
    return LEVELS[: LEVELS.index(level) + 1]


def load(
    annotation_file: str | os.PathLike,
    cc3m_dir: str | os.PathLike | None = None,
    seed_bench_v2_dir: str | os.PathLike | None = None,
    level: str = "L2",
    part: str = "all",
    version: str = "v2",
    dimensions: list[int] | str | None = None,
) -> list[Item]:
    """Read the SEED-Bench-2 JSON into items, filtered as the official script does.

    ``level``: cumulative (default L2 = dims 1-24, what text-output models are evaluated on).
    ``part``: a subpart name (exact match) or ``"all"``. ``version``: ``v1`` keeps items
    inherited from SEED-Bench-1, ``v2`` keeps all. ``dimensions`` further restricts by id.
    ``annotation_file`` may also name another copy (hub parquet, VLMEvalKit TSV; ``tasks/copies``).
    """
    official = copies.as_official(SHAPE, annotation_file)
    if official is not None:  # the copy carries its images
        annotation_file, cc3m_dir, seed_bench_v2_dir = (official[k] for k in ("annotation_file", "cc3m_dir", "seed_bench_v2_dir"))
    path = Path(annotation_file)
    data = read_json(path)
    questions = require(data, "questions", path, None, list)
    qtype_map = data.get("question_type", {}) if isinstance(data, dict) else {}
    _check_type_map(qtype_map, path)
    keep_levels = levels_upto(level)
    if part != "all" and part not in SUBPARTS:
        raise ValueError(f"unknown subpart {part!r}; use 'all' or one of {SUBPARTS}")
    if version not in ("v1", "v2"):
        raise ValueError("version must be 'v1' or 'v2'")
    roots = {"cc3m": cc3m_dir, "SEED-Bench v2": seed_bench_v2_dir}
    if dimensions == "all":
        dimensions = None
    elif dimensions is not None:
        dimensions = [int(d) for d in ([dimensions] if isinstance(dimensions, (int, str)) else dimensions)]
    items, seen = [], {}
    for i, q in enumerate(questions):
        qid, dim = question_id_and_dimension(q, i, path, seen, DIMENSIONS, "SEED-Bench-2")
        name, subpart, dim_level = DIMENSIONS[dim]
        q_level = q.get("level", dim_level)
        if q_level not in LEVELS:  # never dropped by the level filter unnoticed
            raise DataError(str(path), f"unknown level {q_level!r}; expected one of {list(LEVELS)}", qid, "level")
        q_subpart = q.get("subpart", subpart)
        if q_level not in keep_levels or (part != "all" and q_subpart != part):
            continue
        if version == "v1" and q.get("version") != "v1":
            continue
        if dimensions is not None and dim not in dimensions:
            continue
        choices = choices_abcd(q, path, qid)
        answer = require(q, "answer", path, qid, str)
        if len(answer) != 1 or answer not in "ABCD":
            raise DataError(str(path), f"answer must be one of A-D, got {answer!r}", qid, "answer")
        source = require(q, "data_source", path, qid, str)
        if source not in roots:
            raise DataError(str(path), f"unknown data_source {source!r}; known: {sorted(roots)}", qid, "data_source")
        data_id = require(q, "data_id", path, qid, (str, list))
        ids = [data_id] if isinstance(data_id, str) else list(data_id)
        if not ids or not all(isinstance(x, str) and x for x in ids):
            raise DataError(str(path), f"expected a non-empty file name or list of them, got {data_id!r}", qid, "data_id")
        files, errors = [], []
        for rel in ids:
            p, err = media_path(roots[source], rel)
            files.append(p)
            if err:
                errors.append(err)
        data_type = q.get("data_type", "")
        item = Item(
            id=qid, benchmark=BENCHMARK, split="test", question=require(q, "question", path, qid, str),
            choices=choices, answer=answer, dimension_id=dim, dimension=name, group=q_subpart,
            level=q_level, part=PART_OF_LEVEL.get(q_level), output=OUTPUT.get(dim, "text"),
            image_marker="<img>",
            meta={"data_id": data_id, "data_type": data_type, "data_source": source, "version": q.get("version")},
        )
        if errors:
            item.meta["media_error"] = f"data_id: {errors[0]}"
        _place_media(item, dim, files, path)
        why = duplicate_choices(choices)
        if why:
            refuse_or_mark(item, path, "choices", why)
        items.append(item)
    return items


def _place_media(item: Item, dim: int, files: list[str], path) -> None:
    """docs/protocols.md §2.1: where each ``data_id`` entry goes, by dimension."""
    if dim in (25, 27):
        item.choice_images = files  # the 4 option images, A-D
    elif dim == 26:
        if len(files) != 7:
            raise DataError(str(path), f"dimension 26 needs 7 images (3 context + 4 options), got {len(files)}", item.id, "data_id")
        item.images, item.choice_images = files[:3], files[3:]
    elif DIMENSIONS[dim][1] == VIDEO:
        item.frames = files  # shipped as 8 frames: never re-sampled (P-T6)
        if len(files) < 2:
            refuse_or_mark(item, path, "data_id", f"a video question needs its frames (8 are shipped), got {len(files)}: "
                                                  f"one frame is an image, not a video")
    else:
        item.images = files
    if dim in (25, 26, 27) and len(item.choice_images) != 4:
        raise DataError(str(path), f"expected 4 option images, got {len(item.choice_images)}", item.id, "data_id")
    n_markers = item.question.count("<img>")
    if n_markers and n_markers != len(item.images):
        item.meta["media_error"] = f"question: {n_markers} <img> markers but {len(item.images)} images in data_id"


def _check_type_map(qtype_map: dict, path) -> None:
    for name, dim in qtype_map.items():
        try:
            dim = int(dim)
        except (TypeError, ValueError):
            raise DataError(str(path), f"dimension id for {name!r} is not an integer", None, "question_type") from None
        if dim not in DIMENSIONS:
            warnings.warn(f"{path}: question_type names unknown dimension id {dim} ({name!r})", stacklevel=3)


# --------------------------------------------------------------------------------------------- the task
class Seed2Task(SeedTask):
    """SEED-Bench-2: SEED v1's contract with 27 dimensions, levels L1-L3 and subparts (a variant of v1)."""
    audit = AuditPart("mmbench_lib.tasks.seed_audit:SEED2")  # mmbench audit (docs/audit.md)

    name = BENCHMARK
    aliases = ()
    title = "SEED-Bench-2"
    order = 20
    published_tables = ("seed2_table2",)
    blind_reference = None  # not in the MMStar paper's tables
    dimensions = DIMENSIONS
    groups = GROUPS
    results_need_questions = False  # ids are ``<dim>_<k>`` and rows carry ``gt_answer``
    split_sizes = {"test": 24371}  # SEED-Bench_v2_level1_2_3.json, every level (docs/protocols.md §2.2)
    named_selections = ()
    parameter_choices = {"level": LEVELS, "seed2_level": LEVELS, "part": ("all", *SUBPARTS)}
    demo_keys = ("annotation_file", "cc3m_dir", "seed_bench_v2_dir")
    demo_filters = ("level", "part", "version", "dimensions")
    data_defaults = {"level": "L2", "part": "all", "dimensions": "all"}  # notebook 10's defaults
    path_parameters = ("annotation_file", "cc3m_dir", "seed_bench_v2_dir")
    module = sys.modules[__name__]
    layouts = (
        Layout("official", "SEED-Bench_v2_level1_2_3.json, CC3M images under cc3m_dir, the rest under seed_bench_v2_dir",
               ("cc3m_dir", "seed_bench_v2_dir")),
        Layout("parquet", "the lmms-eval hub copy (lmms-lab/SEED-Bench-2): data/test-*.parquet, one such file, or the "
                          "hub id held in the local hub cache; one image per data_id entry inlined"),
        Layout("tsv", "VLMEvalKit SEEDBench2.tsv (dimensions 1-24; base64 images, category names)"),
    )
    copy_shape = SHAPE


register_task(Seed2Task)
