"""SEED-Bench (v1): the raw ``SEED-Bench.json`` layout, 12 dimensions, image + video.

SEED-Bench paper §3 (dimensions, Table 1/3) and docs/protocols.md §1. Dimension ids are the
key (pitfall P-S1: the names of ids 3 and 4 were once swapped in the file's ``question_type``
map); the paper's names are used and a disagreeing file map is reported, not trusted.
"""
from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

from mmbench_lib.core.items import DataError, Item, VideoClip
from mmbench_lib.core.video import list_frame_folder
from mmbench_lib.core.paths import PathEscape
from mmbench_lib.tasks.base import AuditPart, Layout, PublishedColumn, Task, did_you_mean, register_task
from mmbench_lib.tasks._common import (choices_abcd, duplicate_choices, media_path, question_id_and_dimension, read_json,
                                       refuse_or_mark, require)
from mmbench_lib.tasks.copies import seed as copies
from mmbench_lib.tasks.recipes import DEFAULT_RANKING_PROTOCOLS, RANKING_PROTOCOLS

BENCHMARK = "seed"

#: id -> (name, modality). SEED-Bench Table 1 / docs/protocols.md §1.2.
DIMENSIONS: dict[int, tuple[str, str]] = {
    1: ("Scene Understanding", "image"),
    2: ("Instance Identity", "image"),
    3: ("Instance Attributes", "image"),
    4: ("Instance Location", "image"),
    5: ("Instances Counting", "image"),
    6: ("Spatial Relation", "image"),
    7: ("Instance Interaction", "image"),
    8: ("Visual Reasoning", "image"),
    9: ("Text Understanding", "image"),
    10: ("Action Recognition", "video"),
    11: ("Action Prediction", "video"),
    12: ("Procedure Understanding", "video"),
}
IMAGE_DIMS = tuple(range(1, 10))
VIDEO_DIMS = (10, 11, 12)

#: official frame rule per video dimension (docs/protocols.md §1.4 item 7) and the source it reads
VIDEO_RULES = {10: "whole_minus_last", 11: "seconds", 12: "frames"}
VIDEO_SOURCES = {10: "ssv2", 11: "epic_kitchens", 12: "breakfast"}
#: the official pre-extracted frames (docs/protocols.md §1.3): ``task<dim>/<source>_8_frame/<question_id>/``, 8 each
FRAME_FOLDERS = {10: "ssv2_8_frame", 11: "kitchen_8_frame", 12: "breakfast_8_frame"}
FRAMES_PER_VIDEO = 8

#: metric groups: name -> dimension ids (docs/protocols.md §1.5)
GROUPS = {"Image": IMAGE_DIMS, "Video": VIDEO_DIMS, "All": IMAGE_DIMS + VIDEO_DIMS}

PROMPT = "Question: {question}\nAnswer:"  # the v1 reference recipe (InstructBLIP via LAVIS)

#: what the v1 copies hold (``tasks/copies/seed.py``); VLMEvalKit names dimension 9 "Text Recognition"
SHAPE = copies.SeedShape(BENCHMARK, "SEED-Bench.json", DIMENSIONS, frame_folders=FRAME_FOLDERS,
                         frames=FRAMES_PER_VIDEO, names={"Text Recognition": 9})


def select_dimensions(task: str | int | list | None) -> tuple[int, ...]:
    """Official ``--task``: 'image' = 1-9, 'video' = 10-12, 'all', or dimension id(s)."""
    if task in (None, "all", "All"):
        return IMAGE_DIMS + VIDEO_DIMS
    if task == "image":
        return IMAGE_DIMS
    if task == "video":
        return VIDEO_DIMS
    ids = [task] if isinstance(task, (int, str)) else list(task)
    out = []
    for t in ids:
        t = int(t)
        if t not in DIMENSIONS:
            raise ValueError(f"unknown SEED-Bench dimension id {t}; known: 1-12")
        out.append(t)
    return tuple(out)


def load(
    annotation_file: str | os.PathLike,
    image_root: str | os.PathLike | None = None,
    video_roots: dict | None = None,
    frames_root: str | os.PathLike | None = None,
    dimensions: str | int | list | None = "all",
) -> list[Item]:
    """Read ``SEED-Bench.json`` into items.

    ``image_root``: the flat CC3M folder (``<root>/<data_id>``, no extension added).
    ``video_roots``: source name or dimension id -> root (``ssv2``/10, ``epic_kitchens``/11,
    ``breakfast``/12); the video is ``<root>/<data_id>`` (dim 11 also tries the basename, as
    Qwen-VL's converter does). ``frames_root``: pre-extracted frames, ``<root>/<question_id>/``;
    when given, video questions use those frames instead of decoding; the official
    ``v1_video/task<dim>/<source>_8_frame/<question_id>/`` layout is found too.
    ``annotation_file`` may also name another copy (hub parquet, VLMEvalKit TSV; ``tasks/copies``).
    """
    origin = annotation_file
    official = copies.as_official(SHAPE, annotation_file)
    if official is not None:  # the copy carries its images and frames
        annotation_file, image_root, frames_root = (official[k] for k in ("annotation_file", "image_root", "frames_root"))
    path = Path(annotation_file)
    data = read_json(path)
    questions = require(data, "questions", path, None, list)
    qtype_map = require(data, "question_type", path, None, dict)
    _check_type_map(qtype_map, path)
    wanted = set(select_dimensions(dimensions))
    roots = _video_roots(video_roots)
    items, seen = [], {}
    for i, q in enumerate(questions):
        qid, dim = question_id_and_dimension(q, i, path, seen, DIMENSIONS, "SEED-Bench")
        if dim not in wanted:
            continue
        choices = choices_abcd(q, path, qid)
        answer = require(q, "answer", path, qid, str)
        if answer not in "ABCD" or len(answer) != 1:
            raise DataError(str(path), f"answer must be one of A-D, got {answer!r}", qid, "answer")
        data_id = require(q, "data_id", path, qid, str)
        name, modality = DIMENSIONS[dim]
        item = Item(
            id=qid, benchmark=BENCHMARK, split="test", question=require(q, "question", path, qid, str),
            choices=choices, answer=answer, dimension_id=dim, dimension=name, group=modality,
            meta={"data_id": data_id, "data_type": q.get("data_type", modality)},
        )
        if modality == "image":
            p, err = media_path(image_root, data_id)
            item.images = [p]
            if err:
                item.meta["media_error"] = f"data_id: {err}"
        else:
            _attach_video(item, q, dim, data_id, roots, frames_root, path, None if official is None else origin)
        why = duplicate_choices(choices)
        if why:
            refuse_or_mark(item, path, "choices", why)
        items.append(item)
    return items


def _attach_video(item, q, dim, data_id, roots, frames_root, path, copy=None):
    """``copy``: the copy (parquet, TSV) the frames came from, named in a frame-count error instead of its cache."""
    segment = q.get("segment")
    rule = VIDEO_RULES[dim]
    if rule == "seconds" or rule == "frames":
        if not isinstance(segment, (list, tuple)) or len(segment) != 2:
            raise DataError(str(path), f"dimension {dim} needs a [start, end] segment, got {segment!r}", item.id, "segment")
        for x in segment:
            if not isinstance(x, (int, float)) or isinstance(x, bool):
                raise DataError(str(path), f"segment bounds must be numbers, got {segment!r}", item.id, "segment")
        segment = (segment[0], segment[1])
    else:
        segment = None
    if frames_root is not None:
        folder, err = copies.frame_folder(frames_root, item.id, dim, FRAME_FOLDERS)
        if err:
            item.meta["media_error"] = f"question_id: {err}"
        elif Path(folder).is_dir():
            try:  # frames stay inside their question's folder (which may be a symlink the user made)
                item.frames = list_frame_folder(folder, root=Path(folder).resolve())
            except PathEscape as e:  # e.g. a symlinked frame leading out of frames_root
                item.meta["media_error"] = f"frames: {e}"
            if not item.frames and "media_error" not in item.meta:
                item.meta["media_error"] = f"frames: no frame images in {folder}"
            copies.check_frame_count(item, SHAPE, copy or folder)
        else:
            item.meta["media_error"] = f"no pre-extracted frame folder {folder}"
        return
    root = roots.get(dim)
    p, err = media_path(root, data_id)
    if not err and dim == 11 and not Path(p).exists() and root is not None:
        alt, _ = media_path(root, os.path.basename(data_id))
        if Path(alt).exists():
            p = alt
    item.video = VideoClip(path=p, rule=rule, segment=segment)
    if err:
        item.meta["media_error"] = f"data_id: {err} ({VIDEO_SOURCES[dim]} videos)"
    elif segment is not None and segment[1] <= segment[0]:  # the official rule selects no frame
        item.meta["media_error"] = f"segment: empty or reversed segment {list(segment)}, no frame to show"
    elif segment is not None and min(segment) < 0:  # before the video starts: failed alike for blind and vision models
        item.meta["media_error"] = f"segment: negative bound in {list(segment)}, no frame to show"


def _video_roots(video_roots: dict | None) -> dict[int, str]:
    out = {}
    by_name = {v: k for k, v in VIDEO_SOURCES.items()}
    for key, root in (video_roots or {}).items():
        dim = by_name.get(key) if isinstance(key, str) and not key.isdigit() else int(key)
        if dim not in VIDEO_SOURCES:
            raise ValueError(f"unknown video source {key!r}; use one of {sorted(by_name)} or 10/11/12")
        out[dim] = root
    return out


def _check_type_map(qtype_map: dict, path) -> None:
    for name, dim in qtype_map.items():
        try:
            dim = int(dim)
        except (TypeError, ValueError):
            raise DataError(str(path), f"dimension id for {name!r} is not an integer: {dim!r}", None, "question_type") from None
        if dim in DIMENSIONS and _norm(name) != _norm(DIMENSIONS[dim][0]) and not (
            dim == 9 and _norm(name) == "textrecognition"
        ):
            warnings.warn(
                f"{path}: question_type maps {name!r} to id {dim}, the paper calls id {dim} "
                f"{DIMENSIONS[dim][0]!r}; items are keyed by id and named as in the paper (pitfall P-S1)",
                stacklevel=3,
            )


def _norm(s: str) -> str:
    return "".join(ch for ch in s.lower() if ch.isalnum())


# --------------------------------------------------------------------------------------------- the task
class SeedTask(Task):
    """SEED-Bench (v1): 12 dimensions, ranked answers, one test split (the SEED family's base class)."""
    audit = AuditPart("mmbench_lib.tasks.seed_audit:SEED")  # mmbench audit (docs/audit.md)

    name = BENCHMARK
    aliases = ("seed1",)
    title = "SEED-Bench"
    paper = "seed"
    order = 10
    published_tables = ("seed1_table3", "seed1_fig5_leaderboards")
    #: MMStar (arXiv 2403.20330) Tables 1-2: LLMs and LVLMs without images on SEED-Image (dimensions 1-9)
    blind_reference = PublishedColumn(("mmstar_table1", "mmstar_table2"), "seed_image", "SEED-Image", group="Image")
    #: notebook 50's protocols (``tasks.recipes``: the paper's content ranking, the leaderboard's and harnesses')
    ranking_protocols = RANKING_PROTOCOLS
    default_ranking_protocols = DEFAULT_RANKING_PROTOCOLS
    protocol = "ranking"
    dimensions = DIMENSIONS
    groups = GROUPS
    numbered_dimensions = True
    results_need_questions = True  # official v1 results.json rows carry no dimension
    split_sizes = {"test": 17990}  # the current SEED-Bench.json (3,757 videos after the Nov-2023 update; docs/protocols.md §1.2)
    #: selections by name besides ``all`` (the official ``--task``)
    named_selections: tuple[str, ...] = ("image", "video")
    #: demo path keys -> loader keywords, and the loader filters a demo run may pass on
    demo_keys: tuple[str, ...] = ("annotation_file", "image_root", "video_roots")
    demo_filters: tuple[str, ...] = ("dimensions",)
    data_defaults = {"dimensions": "all"}  # notebook 10's defaults
    path_parameters = ("annotation_file", "image_root", "video_roots", "frames_root")
    module = sys.modules[__name__]
    layouts = (
        Layout("official", "SEED-Bench.json, CC3M images under image_root, the source videos under video_roots",
               ("image_root", "video_roots")),
        Layout("frames", "SEED-Bench.json with frames_root: the official v1_video/task<dim>/<source>_8_frame/"
                         "<question_id>/ frames (8 per video), or a flat <question_id>/ folder", ("image_root", "frames_root")),
        Layout("parquet", "the lmms-eval hub copy (lmms-lab/SEED-Bench): data/test-*.parquet, one such file, or the hub "
                          "id held in the local hub cache; images and 8 frames per video inlined"),
        Layout("tsv", "VLMEvalKit SEEDBench_IMG.tsv (image questions; base64 images, category names)"),
    )
    #: what this task's copies hold (``tasks/copies/seed.py``)
    copy_shape: copies.SeedShape = SHAPE

    def unread_paths(self, values: dict) -> tuple[str, ...]:
        """An image-only selection (``dimensions: image`` or image ids) reads no video or frame folder, so a
        params file's video folders need not exist (issue 35: the on-ramp for image-only runs)."""
        if "video_roots" not in self.path_parameters:
            return ()
        try:
            wanted = select_dimensions(values.get("dimensions", "all"))
        except (ValueError, TypeError):
            return ()
        return ("video_roots", "frames_root") if not set(wanted) & set(VIDEO_DIMS) else ()

    def probe(self, location, split=None, args: dict | None = None) -> str:
        """``official`` (``frames`` when ``args`` names a ``frames_root``), ``parquet`` or ``tsv``."""
        kind = copies.probe(self.copy_shape, location)
        return "frames" if kind == "official" and (args or {}).get("frames_root") and "frames" in \
            {x.key for x in self.layouts} else kind

    def check_selection(self, name: str, value) -> None:
        """``dimensions``: ``all``, a named selection (v1: image / video) or dimension ids."""
        if name != "dimensions" or value in ("all", None, [], ()):
            return
        top = max(self.dimensions)
        if isinstance(value, str):
            if value in self.named_selections:
                return
            if self.named_selections:
                words = [*self.named_selections, "all"]
                raise ValueError(f"use {', '.join(repr(w) for w in words)} or a list of ids 1-{top}"
                                 f"{did_you_mean(value, words)}")
            raise ValueError(f"use 'all' or a list of ids 1-{top}")
        for d in [value] if isinstance(value, int) else value if isinstance(value, list) else []:
            if isinstance(d, bool) or not isinstance(d, int) or d not in self.dimensions:
                raise ValueError(f"{d!r} is not a {self.name} dimension id (1-{top})")


register_task(SeedTask)
