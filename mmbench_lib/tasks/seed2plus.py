"""SEED-Bench-2-Plus (``AILab-CVC/SEED-Bench-2-plus``): 2,277 four-choice questions on text-rich images.

Paper: Li et al., "SEED-Bench-2-Plus: Benchmarking Multimodal Large Language Models with Text-Rich
Visual Comprehension", arXiv 2404.16790. Three categories (the file's ``question_image_type``):
Charts, Maps, Webs, each split into data types (``question_image_subtype``, e.g. "tree diagram").

Protocol: answer ranking as in SEED-Bench-2 - the likelihood of each choice's content given image
and question, the most likely choice taken (the paper's evaluation strategy: ranking avoids relying
on instruction following and letter extraction). The paper does not state the likelihood
reduction (sum or mean over tokens) in the text we could read; the suite records it in the recipe of
every run (``seed1-ppl``: summed log-likelihood; ``llava-chat``: mean, the SEED-2 LLaVA wrapper), so
a number always says which one made it.

More: docs/modules.md, ``mmbench_lib/tasks/seed2plus.py``.
"""
from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

from mmbench_lib.core.items import DataError, Item
from mmbench_lib.tasks._common import check_unique, duplicate_choices, media_path, read_json, require
from mmbench_lib.tasks.base import AuditPart, Layout, register_task
from mmbench_lib.tasks.copies import tables
from mmbench_lib.tasks.copies.tables import read_parquet
from mmbench_lib.tasks.mmmu import default_cache_dir, write_image
from mmbench_lib.tasks.seed1 import SeedTask

BENCHMARK = "seed2plus"
HUB_ID = "AILab-CVC/SEED-Bench-2-plus"
ANNOTATION_FILE = "SEED-Bench-2-plus-text-rich.json"

#: id -> (category name, file value); dimensions are the three categories
DIMENSIONS: dict[int, tuple[str, str]] = {1: ("Charts", "chart"), 2: ("Maps", "map"), 3: ("Webs", "web")}
CATEGORY_IDS = {v: k for k, (_n, v) in DIMENSIONS.items()}
#: question-weighted overall over the three categories (the paper's "Overall")
GROUPS = {"Charts": (1,), "Maps": (2,), "Webs": (3,), "Overall": (1, 2, 3)}
CHOICE_KEYS = ("choice_A", "choice_B", "choice_C", "choice_D")


def _choices(q: dict, path, qid) -> list[str]:
    out = []
    for key in CHOICE_KEYS:
        if key not in q and key.lower() in q:
            raise DataError(str(path), f"choice key {key.lower()!r} is lower case; SEED-Bench-2-Plus uses {key!r}", qid, key.lower())
        v = require(q, key, path, qid)
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise DataError(str(path), f"expected a string, got {type(v).__name__} {v!r}", qid, key)
        out.append(str(v))
    extra = sorted(k for k in q if isinstance(k, str) and k.lower().startswith("choice_") and k not in CHOICE_KEYS)
    if extra:
        raise DataError(str(path), f"unexpected extra choice(s) {extra}; this benchmark has exactly 4 (A-D)", qid, extra[0])
    return out


def record_to_item(q: dict, i: int, path, seen: dict, image_root=None, image_dir: Path | None = None) -> Item:
    """One question (JSON or parquet row) -> ``Item``; DataError naming file, item and field."""
    qid = str(require(q, "question_id", path, f"#{i}", (str, int)))
    check_unique(seen, qid, path, f"question #{i}")
    category = require(q, "question_image_type", path, qid, str)
    if category.lower() not in CATEGORY_IDS:
        raise DataError(str(path), f"unknown category {category!r}; expected one of {list(CATEGORY_IDS)}", qid,
                        "question_image_type")
    dim = CATEGORY_IDS[category.lower()]
    answer = require(q, "answer", path, qid, str)
    if answer not in ("A", "B", "C", "D"):
        raise DataError(str(path), f"answer must be one of A-D, got {answer!r}", qid, "answer")
    data_id = q.get("data_id")
    images, error = [], None
    if q.get("image") is not None:  # parquet copy: the image inlined
        p, error = write_image(q["image"], image_dir, f"seed2plus_{qid}")
        images = [p or ""]
    else:
        if not isinstance(data_id, str) or not data_id:
            raise DataError(str(path), f"expected an image file name, got {data_id!r}", qid, "data_id")
        p, error = media_path(image_root, data_id)
        images = [p]
    item = Item(
        id=qid, benchmark=BENCHMARK, split="test", question=require(q, "question", path, qid, str),
        choices=_choices(q, path, qid), answer=answer, dimension_id=dim, dimension=DIMENSIONS[dim][0],
        group=DIMENSIONS[dim][0], images=images, image_type=[q.get("question_image_subtype") or ""],
        meta={"subtype": q.get("question_image_subtype") or "", "data_id": data_id,
              "data_source": q.get("data_source"), "level": q.get("level"), "version": q.get("version")},
    )
    if error:
        item.meta["media_error"] = f"{'image' if q.get('image') is not None else 'data_id'}: {error}"
    return item


NEEDED = ("question_id", "question", *CHOICE_KEYS, "answer", "question_image_type")


def probe(annotation_file) -> str:
    """A cheap look at a copy (layout, columns, the first question): ``official`` or ``parquet``; DataError
    naming the file, what was expected and what was found."""
    path = Path(annotation_file)
    if not path.exists():
        raise DataError(str(path), "annotation file not found")
    if path.is_dir():
        files = sorted(path.rglob("*.parquet"))
        if not files:
            raise DataError(str(path), f"expected {ANNOTATION_FILE} or a folder of parquet copies; found a folder "
                                       f"holding {sorted(x.name for x in path.iterdir())[:8]}")
        tables.require_columns(files[0], tables.parquet_columns(files[0]), (*NEEDED, "image"), "the SEED-Bench-2-Plus parquet")
        return "parquet"
    kind = tables.sniff(path)
    if kind == "parquet":
        tables.require_columns(path, tables.parquet_columns(path), (*NEEDED, "image"), "the SEED-Bench-2-Plus parquet")
        return "parquet"
    if kind != "json":
        raise DataError(str(path), f"expected {ANNOTATION_FILE} or a parquet copy; found a file that is neither")
    rows = _rows(path)
    first = rows[0] if rows else {}
    missing = [c for c in NEEDED if not isinstance(first, dict) or c not in first]
    if rows and missing:
        raise DataError(str(path), f"expected SEED-Bench-2-Plus questions with fields {list(NEEDED)}; the first lacks {missing}")
    return "official"


def _rows(path: Path) -> list[dict]:
    if path.is_file() and tables.sniff(path) == "json":
        data = read_json(path)
        rows = data.get("questions") if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise DataError(str(path), "expected a list of questions or an object with a 'questions' list")
        return rows
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
    if not files:
        raise DataError(str(path), "no .parquet file found")
    return read_parquet(files)


def load(annotation_file: str | os.PathLike, image_root: str | os.PathLike | None = None,
         dimensions: list[int] | str | None = None, subtypes: list[str] | None = None,
         cache_dir: str | os.PathLike | None = None) -> list[Item]:
    """Items of the official JSON (images under ``image_root``) or of a parquet copy (file or folder;
    images inlined and written once under ``cache_dir``). ``dimensions``: category ids (1 Charts,
    2 Maps, 3 Webs) or ``"all"``; ``subtypes``: keep only these ``question_image_subtype`` values."""
    path = Path(annotation_file)
    if not path.exists():
        raise DataError(str(path), "annotation file not found")
    rows = _rows(path)
    if path.is_file() and tables.sniff(path) == "json" and image_root is None:
        image_root = path.parent
    if dimensions in ("all", None):
        keep = None
    else:
        keep = {int(d) for d in ([dimensions] if isinstance(dimensions, (int, str)) else dimensions)}
    if cache_dir is None:
        cache_dir = default_cache_dir(str(path), BENCHMARK)
    items, seen = [], {}
    for i, q in enumerate(rows):
        item = record_to_item(q, i, path, seen, image_root, Path(cache_dir))
        if keep is not None and item.dimension_id not in keep:
            continue
        if subtypes is not None and item.meta["subtype"] not in subtypes:
            continue
        items.append(item)
    mark_identical_options(items, path)
    return items


def mark_identical_options(items: list[Item], path) -> int:
    """Items whose options repeat one another are scored as the file gives them (the official evaluation scores
    them too) but never silently: each is marked (``meta["quirk"]``, the row's ``quirk``) and one warning counts
    them, naming the first. Content ranking scores both copies alike, so it can never pick the second. Returns
    the count."""
    marked = []
    for item in items:
        why = duplicate_choices(item.choices)
        if why:
            item.meta["quirk"] = f"choices: {why}"
            marked.append(item)
    if marked:
        warnings.warn(f"{path}: {len(marked)} item(s) have identical options, scored as given and marked 'quirk' in "
                      f"their rows (e.g. item {marked[0].id!r}: {marked[0].meta['quirk']})", stacklevel=3)
    return len(marked)


def per_subtype(rows: list[dict]) -> dict:
    """``(category, subtype) -> {n, correct, accuracy}`` of scored rows: ``dimension``, ``correct`` and the
    subtype as ``subtype`` or as the one entry of ``image_type`` (what prediction rows carry)."""
    out: dict = {}
    for r in rows:
        if r.get("correct") is None:
            continue
        key = (r.get("dimension"), r.get("subtype") or (r.get("image_type") or [""])[0])
        c, n = out.get(key, (0, 0))
        out[key] = (c + bool(r["correct"]), n + 1)
    return {k: {"n": n, "correct": c, "accuracy": c / n} for k, (c, n) in sorted(out.items())}


class Seed2PlusTask(SeedTask):
    """SEED-Bench-2-Plus: the SEED ranking contract with three categories and their data-type subtypes."""
    audit = AuditPart("mmbench_lib.tasks.seed_audit:SEED2PLUS")  # mmbench audit (docs/audit.md)

    name = BENCHMARK
    aliases = ("seed2-plus", "seed_bench_2_plus")
    title = "SEED-Bench-2-Plus"
    paper = ""
    published_tables = ("seed2plus_table2",)
    blind_reference = None  # not in the MMStar paper's tables
    dimensions = DIMENSIONS
    groups = GROUPS
    results_need_questions = False
    split_sizes = {"test": 2277}  # docs/protocols.md §2.6 P-T8
    named_selections = ()
    hub_id = HUB_ID
    demo_keys = ("annotation_file", "image_root")
    path_parameters = ("annotation_file", "image_root")
    demo_filters = ("dimensions",)
    data_defaults = {"dimensions": "all"}  # notebook 10's defaults
    module = sys.modules[__name__]
    layouts = (
        Layout("official", f"{ANNOTATION_FILE} (a list of questions or {{questions: [...]}}), the text_rich/ images under "
                           "image_root (default: the JSON's folder)", ("image_root",)),
        Layout("parquet", "parquet copies of the rows with the image inlined in an 'image' column: a .parquet file or a "
                          "folder of them"),
    )

    def probe(self, location, split=None, args: dict | None = None) -> str:
        return probe(location)


register_task(Seed2PlusTask)
