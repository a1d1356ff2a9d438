"""Reading the tables of a data copy: parquet files, VLMEvalKit TSV files, cached hub snapshots.

More: docs/modules.md, ``mmbench_lib/tasks/copies/tables.py``.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from pathlib import Path

from mmbench_lib.core.items import DataError, regular_file

#: the largest TSV cell read (a base64 image list): VLMEvalKit's largest rows hold a few MB
MAX_CELL = 1 << 28
_B64_LIST = re.compile(r"\[\s*(?:(['\"])[A-Za-z0-9+/=\s]*\1\s*(?:,\s*(['\"])[A-Za-z0-9+/=\s]*\2\s*)*,?\s*)?\]")
_B64_ITEM = re.compile(r"(['\"])([A-Za-z0-9+/=\s]*)\1")
HUB_ID_RE = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
PARQUET_MAGIC = b"PAR1"


def sniff(path: Path) -> str:
    """What a file is, from its first bytes: ``parquet``, ``json``, ``tsv`` or ``unknown``; a path that is
    not a regular file (a FIFO, a device) is a ``DataError`` before it is opened."""
    with open(regular_file(path), "rb") as f:
        head = f.read(4096)
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if text[:1] in (b"{", b"["):
        return "json"
    first = head.split(b"\n", 1)[0]
    if b"\t" in first:
        return "tsv"
    return "unknown"


def hub_snapshot(repo_id: str) -> Path | None:
    """The local folder of a dataset repository in the Hugging Face hub cache (``HF_HUB_CACHE``, else
    ``HF_HOME/hub``, read at each call), or ``None``; never downloads (``local_files_only``)."""
    if not HUB_ID_RE.fullmatch(str(repo_id)) or Path(repo_id).exists():
        return None
    try:
        from huggingface_hub import constants, snapshot_download

        home = os.environ.get("HF_HOME")
        cache = os.environ.get("HF_HUB_CACHE") or (str(Path(home) / "hub") if home else constants.HF_HUB_CACHE)
        return Path(snapshot_download(repo_id, repo_type="dataset", cache_dir=cache, local_files_only=True))
    except Exception:  # noqa: BLE001 - not cached (LocalEntryNotFoundError and kin)
        return None


def local_source(source) -> Path | None:
    """A local folder or file for ``source``: the path itself, or a cached hub snapshot of a hub id."""
    if source in (None, ""):
        return None
    p = Path(source)
    if p.exists():
        return p
    return hub_snapshot(str(source))


def merged_files(folder: Path, split: str) -> list[Path]:
    """The merged hub copy's files for ``split``: ``data/<split>-*.parquet`` (or ``<split>-*.parquet``)."""
    for base in (folder / "data", folder):
        files = sorted(base.glob(f"{split}-*.parquet"))
        if files:
            return files
    return []


def is_merged(folder: Path) -> bool:
    """True for a folder holding the merged hub layout (``data/*.parquet``)."""
    return folder.is_dir() and any((folder / "data").glob("*.parquet"))


def parquet_columns(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(path).names)
    except Exception as e:  # noqa: BLE001
        raise DataError(str(path), f"expected a parquet file, found an unreadable one ({type(e).__name__}: {e})") from None


def read_parquet(files: list[Path], limit: int | None = None) -> list[dict]:
    """Rows of parquet files (the first ``limit`` rows only, when given); DataError for a bad file."""
    import pyarrow.parquet as pq

    rows: list[dict] = []
    for f in files:
        try:
            if limit is not None:
                pf = pq.ParquetFile(f)
                for batch in pf.iter_batches(batch_size=max(1, limit)):
                    rows.extend(batch.to_pylist())
                    break
            else:
                rows.extend(pq.read_table(f).to_pylist())
        except Exception as e:  # noqa: BLE001 - pyarrow raises several types for a bad file
            raise DataError(str(f), f"expected a parquet file, found an unreadable one ({type(e).__name__}: {e})") from None
        if limit is not None and len(rows) >= limit:
            return rows[:limit]
    return rows


def read_tsv(path: Path, limit: int | None = None) -> list[dict]:
    """Rows of a VLMEvalKit TSV (empty cells as ``None``, every value a string), images resolved:
    ``row["image"]`` becomes a list of base64 strings (an index reference replaced by its target)."""
    import csv

    csv.field_size_limit(MAX_CELL)
    try:
        with open(regular_file(path), encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, delimiter="\t")
            rows = []
            for n, r in enumerate(reader):
                rows.append({k: (v if v != "" else None) for k, v in r.items() if k is not None})
                if limit is not None and n + 1 >= limit:
                    break
    except UnicodeDecodeError as e:
        raise DataError(str(path), f"expected a UTF-8 TSV file, found undecodable bytes at {e.start}") from None
    except csv.Error as e:  # e.g. a cell over MAX_CELL characters
        raise DataError(str(path), f"expected a VLMEvalKit TSV, found a row it cannot read ({e})") from None
    if rows and "index" not in rows[0]:
        raise DataError(str(path), f"expected a VLMEvalKit TSV with an 'index' column, found columns {list(rows[0])[:12]}")
    by_index = {r["index"]: r.get("image") for r in rows}
    for r in rows:
        cell = r.get("image")
        if cell is not None and len(cell) <= 64:  # a reference to another row's image
            cell = by_index.get(cell)
            if cell is None and limit is None:
                raise DataError(str(path), f"image refers to index {r['image']!r}, which has no image", r["index"], "image")
        r["image"] = list_cell(cell, path, r["index"], "image") if cell is not None else []
    return rows


def list_cell(cell: str, path=None, item_id=None, field="image") -> list[str]:
    """A cell holding one base64 string or a Python list literal of them (VLMEvalKit ``toliststr``),
    matched as data: a flat list of quoted base64 strings, else one line naming the cell."""
    text = cell.strip()
    if not text.startswith("["):
        return [cell]
    if not _B64_LIST.fullmatch(text):
        raise DataError(str(path), f"expected one base64 image or a flat list of quoted base64 strings, found "
                                   f"{text[:40]!r}... ({len(text):,} characters)", item_id, field)
    return [m.group(2) for m in _B64_ITEM.finditer(text)]


def image_bytes(cell, path, item_id, field) -> bytes:
    """Bytes of one image cell: a ``{"bytes", "path"}`` struct, raw bytes or a base64 string."""
    if isinstance(cell, dict):
        cell = cell.get("bytes")
    if isinstance(cell, (bytes, bytearray)) and cell:
        return bytes(cell)
    if isinstance(cell, str) and cell:
        try:
            return base64.b64decode(cell, validate=False)
        except (binascii.Error, ValueError):
            raise DataError(str(path), "image is not valid base64", item_id, field) from None
    raise DataError(str(path), f"expected image bytes, found {type(cell).__name__}", item_id, field)


def image_list(cell, path, item_id, field) -> list[bytes]:
    """Bytes of an image column that holds one image or a list of them."""
    if cell is None:
        return []
    cells = list(cell) if isinstance(cell, (list, tuple)) else [cell]
    return [image_bytes(c, path, item_id, f"{field}[{i}]") for i, c in enumerate(cells)]


def require_columns(path, columns, needed, what: str) -> None:
    """DataError naming the file, the copy it was read as, the missing columns and what was found."""
    missing = [c for c in needed if c not in columns]
    if missing:
        raise DataError(str(path), f"expected {what} with columns {list(needed)}; missing {missing}, found {sorted(columns)[:15]}")


def write_bytes_once(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` unless the same bytes are already there (atomic)."""
    if target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)


def frame_suffix(data: bytes) -> str:
    return ".png" if data.startswith(b"\x89PNG") else ".jpg"


def source_stamp(source) -> str:
    """What identifies the data a copy was read from: its resolved path, and the size and modification time
    of the file (or of each data file under the folder), so a copy rewritten in place gets a new cache."""
    p = Path(source)
    if not p.exists():
        return str(source)
    files = [p] if not p.is_dir() else sorted(
        f for pattern in ("*.parquet", "*/*.parquet", "*/*/*.parquet", "*.tsv", "*.json", "*.jsonl")
        for f in p.glob(pattern) if f.is_file())
    parts = [str(p.resolve())]
    for f in files:
        st = f.stat()
        parts.append(f"{f.relative_to(p) if p.is_dir() else f.name}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts)


def default_cache_dir(source: str, benchmark: str) -> Path:
    """``$MMBENCH_CACHE`` (default ``~/.cache/mmbench``) ``/<benchmark>/<source slug>-<hash>``; the hash is of
    ``source_stamp`` (path, sizes, modification times): a rewritten copy never reads the old cache."""
    root = Path(os.environ.get("MMBENCH_CACHE") or Path.home() / ".cache" / "mmbench")
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(source)).strip("-")[-40:] or "source"
    digest = hashlib.sha256(source_stamp(source).encode()).hexdigest()[:8]
    return root / benchmark / f"{slug}-{digest}"
