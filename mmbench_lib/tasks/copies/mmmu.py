"""MMMU / CMMMU copies other than the per-config hub layout: rows by subject (MMMU) or category (CMMMU).

More: docs/modules.md, ``mmbench_lib/tasks/copies/mmmu.py``.
"""
from __future__ import annotations

from pathlib import Path

from mmbench_lib.core.items import DataError
from mmbench_lib.tasks.copies import tables

MMMU_COLUMNS = ("id", "question", "options", "answer", "question_type")
CMMMU_COLUMNS = ("id", "type", "question", "answer", "subcategory")
MMMU_TSV = ("index", "question", "answer", "category", "split", "image")
CMMMU_TSV = ("index", "question", "type", "answer", "category", "image")
TSV_NAMES = {"mmmu": "MMMU_*.tsv", "cmmmu": "CMMMU_*.tsv"}


def copy_kind(benchmark: str, source) -> tuple[str, Path | None]:
    """``("merged" | "tsv", path)`` for a copy read here; ``("native", folder or None)`` for the
    layouts the task module reads itself (per-config folders, the official CMMMU layout, a hub id)."""
    p = tables.local_source(source)
    if p is None:
        return "native", None
    if p.is_file():
        if tables.sniff(p) == "tsv":
            return "tsv", p
        if tables.sniff(p) == "parquet":
            return "merged", p
        raise DataError(str(p), f"expected a data folder, a hub parquet file or a VLMEvalKit TSV for {benchmark}; "
                                "found a file that is none of these")
    if tables.is_merged(p):
        return "merged", p
    tsvs = sorted(p.glob(TSV_NAMES[benchmark]))
    if tsvs and not any(x.is_dir() for x in p.iterdir()):
        return "tsv", tsvs[0]
    return "native", p


def _files(path: Path, split: str) -> list[Path]:
    if path.is_file():
        return [path]
    files = tables.merged_files(path, split)
    if not files:
        found = sorted(x.name for x in (path / "data").glob("*.parquet"))
        raise DataError(str(path / "data"), f"expected {split}-*.parquet files, found {found}")
    return files


def probe(benchmark: str, source, split: str) -> str:
    """A cheap look (layout, columns, first rows) at a merged or TSV copy; returns its kind."""
    kind, path = copy_kind(benchmark, source)
    if kind == "merged":
        f = _files(path, split)[0]
        needed = MMMU_COLUMNS if benchmark == "mmmu" else CMMMU_COLUMNS
        tables.require_columns(f, tables.parquet_columns(f), needed, f"the merged hub {benchmark.upper()} parquet")
    elif kind == "tsv":
        rows = tables.read_tsv(path, limit=2)
        tables.require_columns(path, rows[0] if rows else {}, MMMU_TSV if benchmark == "mmmu" else CMMMU_TSV,
                               f"the VLMEvalKit {benchmark.upper()} TSV")
    return kind


def rows(benchmark: str, source, split: str, tags_of=None) -> tuple[str, list[dict], Path | None] | None:
    """``(where, rows in the per-config column names, data folder)`` of a merged or TSV copy, or
    ``None`` when the task module reads ``source`` itself (a cached hub snapshot comes back as its
    folder: see ``native_source``). ``tags_of(question, options)``: CMMMU's image tags in order."""
    kind, path = copy_kind(benchmark, source)
    if kind == "native":
        return None
    if kind == "merged":
        files = _files(path, split)
        where = str(files[0]) if len(files) == 1 else str(files[0].parent / f"{split}-*.parquet")
        needed = MMMU_COLUMNS if benchmark == "mmmu" else CMMMU_COLUMNS
        tables.require_columns(files[0], tables.parquet_columns(files[0]), needed, f"the merged hub {benchmark.upper()} parquet")
        return where, tables.read_parquet(files), (path if path.is_dir() else path.parent)
    got = tables.read_tsv(path)
    tables.require_columns(path, got[0] if got else {}, MMMU_TSV if benchmark == "mmmu" else CMMMU_TSV,
                           f"the VLMEvalKit {benchmark.upper()} TSV")
    recs = [r for r in got if _split_of(benchmark, r) in (split, None)]
    out = [_mmmu_tsv_row(r, path) if benchmark == "mmmu" else _cmmmu_tsv_row(r, path, tags_of) for r in recs]
    return str(path), out, None


def native_source(source):
    """``source``, or the folder of its cached hub snapshot when it is a hub id held locally."""
    if source in (None, "") or Path(source).exists():
        return source
    snap = tables.hub_snapshot(str(source))
    return str(snap) if snap is not None else source


def _split_of(benchmark: str, row: dict):
    s = row.get("split")
    return {"val": "validation"}.get(s, s) if benchmark == "mmmu" else ({"validation": "val"}.get(s, s) if s else None)


def _mmmu_tsv_row(r: dict, path) -> dict:
    letters = [c for c in "ABCDEFGHI" if r.get(c) is not None]
    qid = r.get("id") or f"{r.get('split')}_{str(r['category']).replace(' ', '_')}_{r['index']}"
    images = tables.image_list(r.get("image"), path, qid, "image")
    rec = {"id": qid, "question": r.get("question") or "", "options": repr([r[c] for c in letters]),
           "question_type": "multiple-choice" if letters else "open", "answer": r.get("answer"),
           **{k: r.get(k) for k in ("explanation", "img_type", "topic_difficulty", "subfield") if r.get(k) is not None}}
    for k, data in enumerate(images, 1):
        rec[f"image_{k}"] = {"bytes": data, "path": None}
    return rec


def _cmmmu_tsv_row(r: dict, path, tags_of) -> dict:
    qid = r.get("id") or r["index"]
    options = [r.get(f"option{i}") or "" for i in range(1, 5)] if r.get("type") == "选择" else []
    tags = tags_of(r.get("question") or "", options)
    images = tables.image_list(r.get("image"), path, qid, "image")
    if len(images) != len(tags):
        raise DataError(str(path), f"expected one image per <img> tag ({len(tags)}), found {len(images)}", qid, "image")
    rec = {k: v for k, v in r.items() if k not in ("image", "index", "split")}
    rec["id"] = qid
    for i, (tag, data) in enumerate(zip(tags, images), 1):
        rec[f"image_{i}"], rec[f"image_{i}_filename"] = {"bytes": data, "path": None}, tag
    return rec

