"""SEED-Bench v1 / SEED-Bench-2 copies other than the official JSON, turned into the official layout.

More: docs/modules.md, ``mmbench_lib/tasks/copies/seed.py``.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from mmbench_lib.core.items import DataError
from mmbench_lib.core.paths import PathEscape, inside
from mmbench_lib.tasks._common import read_json, refuse_or_mark, require
from mmbench_lib.tasks.copies import tables

SEED_COLUMNS = ("question_id", "question", "choice_a", "choice_b", "choice_c", "choice_d", "answer",
                "question_type_id", "data_id", "image")
TSV_COLUMNS = ("index", "question", "A", "B", "C", "D", "answer", "image")
_SEGMENT = re.compile(r"\s*\[\s*-?[0-9.eE+-]+\s*,\s*-?[0-9.eE+-]+\s*\]\s*")


@dataclass(frozen=True)
class SeedShape:
    """What one SEED-family task's copies hold (set by the task module, so nothing here is keyed by name):
    ``name`` (the cache folder), ``json_name`` (the official file written), ``dims`` (id -> (name, ...)),
    ``per_data_id``: one image per ``data_id`` entry (SEED-2) or one image / a video's frames (v1);
    ``frame_folders``: video dimension -> the official ``<source>_8_frame`` folder (v1); ``frames``: the
    frames the protocol samples per video (v1: 8, docs/protocols.md §1.3-1.4); ``names``: other
    dimension names a TSV's ``category`` may use."""

    name: str
    json_name: str
    dims: dict
    per_data_id: bool = False
    frame_folders: dict = field(default_factory=dict)
    frames: int | None = None
    names: dict = field(default_factory=dict)


def _norm(s: str) -> str:
    return "".join(ch for ch in str(s).lower() if ch.isalnum())


def copy_kind(annotation_file) -> tuple[str, Path | None, list[Path]]:
    """``(kind, path, files)``: kind ``official`` (the JSON), ``parquet`` or ``tsv``; DataError otherwise."""
    p = tables.local_source(annotation_file)
    if p is None:
        return "official", None, []  # the official loader says the file is missing
    if p.is_dir():
        files = tables.merged_files(p, "test")
        if files:
            return "parquet", p, files
        tsvs = sorted(p.glob("SEEDBench*.tsv"))
        if len(tsvs) == 1:
            return "tsv", tsvs[0], [tsvs[0]]
        raise DataError(str(p), "expected the SEED annotation JSON, a hub parquet copy (data/test-*.parquet) or a "
                                f"VLMEvalKit TSV; found a folder holding {sorted(x.name for x in p.iterdir())[:8]}")
    kind = tables.sniff(p)
    if kind == "json":
        return "official", p, [p]
    if kind in ("parquet", "tsv"):
        return kind, p, [p]
    raise DataError(str(p), "expected the SEED annotation JSON, a hub parquet file or a VLMEvalKit TSV; found "
                            "a file that is none of these (first bytes not JSON, not parquet, no tab-separated header)")


def probe(shape: SeedShape, annotation_file) -> str:
    """A cheap look (layout, columns, first rows) at a SEED copy; returns its kind (``official``,
    ``parquet``, ``tsv``) or raises DataError; a TSV's first ``category`` is checked against ``shape.dims``."""
    kind, path, files = copy_kind(annotation_file)
    if kind == "official":
        if path is None:
            raise DataError(str(annotation_file), "annotation file not found")
        data = read_json(path)
        questions = require(data, "questions", path, None, list)
        if questions:
            missing = [c for c in SEED_COLUMNS[:-1] if not isinstance(questions[0], dict) or c not in questions[0]]
            if missing:
                raise DataError(str(path), f"expected question records with fields {list(SEED_COLUMNS[:-1])}; "
                                           f"the first lacks {missing}")
    elif kind == "parquet":
        tables.require_columns(files[0], tables.parquet_columns(files[0]), SEED_COLUMNS, "the lmms-eval SEED parquet")
    else:
        rows = tables.read_tsv(files[0], limit=2)
        tables.require_columns(files[0], rows[0] if rows else {}, TSV_COLUMNS, "the VLMEvalKit SEED TSV")
        if rows:
            _dimension(shape, rows[0], files[0], rows[0]["index"])
    return kind


def as_official(shape: SeedShape, annotation_file, cache_dir=None) -> dict | None:
    """Loader paths of the official layout for a non-official copy (``None`` for the official JSON):
    ``{annotation_file, image_root, frames_root}`` (v1) or ``{annotation_file, cc3m_dir, seed_bench_v2_dir}``
    (``shape.per_data_id``, SEED-2). The cache folder is keyed by the copy's path, size and modification time."""
    kind, path, files = copy_kind(annotation_file)
    if kind == "official":
        return None
    cache = Path(cache_dir) if cache_dir is not None else tables.default_cache_dir(str(path), shape.name)
    written: dict = {}
    if kind == "parquet":
        tables.require_columns(files[0], tables.parquet_columns(files[0]), SEED_COLUMNS, "the lmms-eval SEED parquet")
        questions = [_from_hub(shape, r, files[0], cache, written) for r in tables.read_parquet(files)]
    else:
        rows = tables.read_tsv(files[0])
        tables.require_columns(files[0], rows[0] if rows else {}, TSV_COLUMNS, "the VLMEvalKit SEED TSV")
        questions = [_from_tsv(shape, r, files[0], cache, written) for r in rows]
    data = {"questions": questions, "question_type": {v[0]: k for k, v in shape.dims.items()}}
    target = cache / shape.json_name
    tables.write_bytes_once(target, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))
    if shape.per_data_id:
        return {"annotation_file": str(target), "cc3m_dir": str(cache / "cc3m"), "seed_bench_v2_dir": str(cache / "v2")}
    return {"annotation_file": str(target), "image_root": str(cache / "cc3m"), "frames_root": str(cache / "frames")}


def _write(root: Path, rel: str, data: bytes, path, qid, written: dict) -> None:
    """Write one image of row ``qid`` once; two rows naming the same file with different bytes are a
    DataError naming both (else one question would be scored on the other's image)."""
    try:
        target = inside(root, rel)
    except PathEscape as e:
        raise DataError(str(path), str(e), qid, "data_id") from None
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    prev = written.get(str(target))
    if prev is not None and prev[1] != digest:
        raise DataError(str(path), f"rows {prev[0]!r} and {qid!r} share data_id {rel!r} with different image bytes; "
                                   "one question would be scored on the other's image", qid, "data_id")
    written[str(target)] = (qid, digest)
    tables.write_bytes_once(target, data)


def _int(value):
    return int(value) if isinstance(value, str) and value.strip().isdigit() else value


def _segment(value, path, qid):
    """A ``segment`` cell as data: ``[start, end]`` numbers (a JSON list literal), never evaluated."""
    if not isinstance(value, str):
        return list(value) if isinstance(value, tuple) else value
    if len(value) > 100 or not _SEGMENT.fullmatch(value):
        raise DataError(str(path), f"segment is not a [start, end] list: {value[:40]!r}", qid, "segment")
    try:
        return json.loads(value)
    except ValueError:
        raise DataError(str(path), f"segment is not a [start, end] list: {value[:40]!r}", qid, "segment") from None


def _from_hub(shape: SeedShape, row: dict, path, cache: Path, written: dict) -> dict:
    qid = str(row.get("question_id"))
    images = tables.image_list(row.get("image"), path, qid, "image")
    q = {k: v for k, v in row.items() if k != "image" and v is not None}
    q["question_type_id"] = _int(q.get("question_type_id"))
    if q.get("segment") is not None:
        q["segment"] = _segment(q["segment"], path, qid)
    data_id = q.get("data_id")
    if shape.per_data_id:
        ids = list(data_id) if isinstance(data_id, (list, tuple)) else [data_id]
        if isinstance(data_id, (list, tuple)):
            q["data_id"] = ids
        if len(images) != len(ids):
            raise DataError(str(path), f"expected one image per data_id entry ({len(ids)}), found {len(images)}", qid, "image")
        root = cache / ("cc3m" if q.get("data_source") == "cc3m" else "v2")
        for rel, data in zip(ids, images):
            _write(root, str(rel), data, path, qid, written)
        return q
    dim = q["question_type_id"]
    if dim in shape.frame_folders:  # a video row carries its frames (the loader checks their count)
        if not images:
            raise DataError(str(path), "expected the video's frames in 'image', found none", qid, "image")
        for k, data in enumerate(images, 1):
            _write(cache / "frames", f"{qid}/{k}{tables.frame_suffix(data)}", data, path, qid, written)
    else:
        if len(images) != 1:
            raise DataError(str(path), f"expected 1 image for an image question, found {len(images)}", qid, "image")
        _write(cache / "cc3m", str(data_id), images[0], path, qid, written)
    return q


def _dimension(shape: SeedShape, row: dict, path, qid) -> int:
    if row.get("question_type_id") not in (None, ""):
        return int(row["question_type_id"])
    by_name = {**{_norm(v[0]): k for k, v in shape.dims.items()}, **{_norm(n): k for n, k in shape.names.items()}}
    name = _norm(row.get("category") or "")
    if name not in by_name:
        raise DataError(str(path), f"expected a dimension name in 'category', found {row.get('category')!r}", qid, "category")
    return by_name[name]


def _from_tsv(shape: SeedShape, row: dict, path, cache: Path, written: dict) -> dict:
    qid = str(row.get("question_id") or row["index"])
    dim = _dimension(shape, row, path, qid)
    images = tables.image_list(row.get("image"), path, qid, "image")
    q = {"question_id": qid, "question": row.get("question") or "", "answer": row.get("answer"),
         "question_type_id": dim, **{f"choice_{c.lower()}": row.get(c) for c in "ABCD"}}
    if shape.per_data_id:
        ids = [f"{qid}/{k}{tables.frame_suffix(d)}" for k, d in enumerate(images, 1)]
        for rel, data in zip(ids, images):
            _write(cache / "v2", rel, data, path, qid, written)
        q.update(data_id=ids, data_source="SEED-Bench v2", data_type=row.get("data_type") or "")
        return q
    if dim in shape.frame_folders:
        for k, data in enumerate(images, 1):
            _write(cache / "frames", f"{qid}/{k}{tables.frame_suffix(data)}", data, path, qid, written)
        q.update(data_id=qid, data_type="video")
    else:
        if len(images) != 1:
            raise DataError(str(path), f"expected 1 image for an image question, found {len(images)}", qid, "image")
        _write(cache / "cc3m", qid, images[0], path, qid, written)
        q.update(data_id=qid, data_type="image")
    return q


def check_frame_count(item, shape: SeedShape, path) -> None:
    """A v1 video item read from frames must have the ``shape.frames`` frames the protocol samples (the official
    ``v1_video`` extracts hold 8 per question, docs/protocols.md §1.3; ``get_index(k=8)``, §1.4): another count
    (from frame folders, hub parquet rows or TSV rows) is refused, or marked failed with ``MMBENCH_KEEP_GOING=1``."""
    if shape.frames is None or not item.frames or len(item.frames) == shape.frames:
        return
    refuse_or_mark(item, path, "frames", f"expected the {shape.frames} frames the protocol samples per video "
                                         f"(the official v1_video extracts), found {len(item.frames)}")


def frame_folder(frames_root, question_id: str, dim: int, frame_folders: dict) -> tuple[str, str | None]:
    """The frame folder of a v1 video question and an error, if any: ``<root>/<question_id>/`` (a flat
    folder, whose entries may be symlinks to folders elsewhere) or the official
    ``[v1_video/]task<dim>/<source>_8_frame/<question_id>/`` (docs/protocols.md §1.3). The id must be one
    plain name (no separator, no ``..``); the frames must then stay inside the folder found."""
    qid = str(question_id)
    if not qid or qid in (".", "..") or "/" in qid or "\\" in qid or os.sep in qid or "\x00" in qid:
        return str(Path(frames_root) / qid), f"question_id {qid!r} is not a plain folder name"
    root = Path(frames_root)
    candidates = [root / qid]
    if dim in frame_folders:
        sub = Path(f"task{dim}") / frame_folders[dim] / qid
        candidates += [root / sub, root / "v1_video" / sub]
    for c in candidates:
        if c.is_dir():
            return str(c), None
    return str(candidates[0]), None
