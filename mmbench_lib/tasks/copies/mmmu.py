"""MMMU / CMMMU copies other than the per-config hub layout: rows by subject (MMMU) or category (CMMMU).

More: docs/modules.md, ``mmbench_lib/tasks/copies/mmmu.py``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mmbench_lib.core.items import DataError
from mmbench_lib.tasks.copies import tables


@dataclass(frozen=True)
class RowsShape:
    """What one task's merged / TSV copies hold (set by the task module, so nothing here is keyed by name):
    ``title``, ``columns`` (the hub parquet's), ``tsv_glob`` (the TSV's file name in a folder),
    ``tsv_columns``, ``tsv_row(row, path)`` (a TSV row as a per-config row) and ``split_of(row)`` (the
    TSV row's split, ``None`` when the file has one)."""

    title: str
    columns: tuple
    tsv_glob: str
    tsv_columns: tuple
    tsv_row: Callable
    split_of: Callable = lambda row: None


def copy_kind(shape: RowsShape, source) -> tuple[str, Path | None]:
    """``("merged" | "tsv", path)`` for a copy read here; ``("native", folder or None)`` for the
    layouts the task module reads itself (per-config folders, the official CMMMU layout, a hub id)."""
    p = tables.local_source(source)
    if p is None:
        return "native", None
    if not p.is_dir():
        kind = tables.sniff(p)  # a FIFO or device: DataError before it is opened
        if kind == "tsv":
            return "tsv", p
        if kind == "parquet":
            return "merged", p
        raise DataError(str(p), f"expected a data folder, a hub parquet file or a VLMEvalKit TSV for {shape.title}; "
                                "found a file that is none of these")
    if tables.is_merged(p):
        return "merged", p
    tsvs = sorted(p.glob(shape.tsv_glob))
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


def probe(shape: RowsShape, source, split: str) -> str:
    """A cheap look (layout, columns, first rows) at a merged or TSV copy; returns its kind."""
    kind, path = copy_kind(shape, source)
    if kind == "merged":
        f = _files(path, split)[0]
        tables.require_columns(f, tables.parquet_columns(f), shape.columns, f"the merged hub {shape.title} parquet")
    elif kind == "tsv":
        rows = tables.read_tsv(path, limit=2)
        tables.require_columns(path, rows[0] if rows else {}, shape.tsv_columns, f"the VLMEvalKit {shape.title} TSV")
    return kind


def rows(shape: RowsShape, source, split: str) -> tuple[str, list[dict], Path | None] | None:
    """``(where, rows in the per-config column names, data folder)`` of a merged or TSV copy, or
    ``None`` when the task module reads ``source`` itself (a cached hub snapshot comes back as its
    folder: see ``native_source``)."""
    kind, path = copy_kind(shape, source)
    if kind == "native":
        return None
    if kind == "merged":
        files = _files(path, split)
        where = str(files[0]) if len(files) == 1 else str(files[0].parent / f"{split}-*.parquet")
        tables.require_columns(files[0], tables.parquet_columns(files[0]), shape.columns, f"the merged hub {shape.title} parquet")
        return where, tables.read_parquet(files), (path if path.is_dir() else path.parent)
    got = tables.read_tsv(path)
    tables.require_columns(path, got[0] if got else {}, shape.tsv_columns, f"the VLMEvalKit {shape.title} TSV")
    return str(path), [shape.tsv_row(r, path) for r in got if shape.split_of(r) in (split, None)], None


def native_source(source):
    """``source``, or the folder of its cached hub snapshot when it is a hub id held locally."""
    if source in (None, "") or Path(source).exists():
        return source
    snap = tables.hub_snapshot(str(source))
    return str(snap) if snap is not None else source
