"""One path policy: data paths stay inside their root, ids become safe file names, run ids
name one folder under ``outputs/`` (docs/architecture.md).

- ``inside(root, path)``: the resolved path (symlinks followed) or ``PathEscape``.
- ``safe_name(name)``: a file name made from an item id (sanitised, plus a short hash when changed).
- ``validate_run_id(run_id)``: one plain folder name, never a source folder of the repository.
- ``outputs_root()``, ``make_run_id(label)``: where run folders go (``$MMBENCH_OUTPUTS``) and a fresh id.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
from pathlib import Path

from mmbench_lib.core.manifest import git_commit, resolve

#: top-level folders of the repository that a run folder must never be (nor live in)
SOURCE_FOLDERS = ("notebooks", "mmbench_lib", "tests", "params", "docs", "annotations", "benchmarks", ".git", ".venv")
#: the repository checkout holding ``mmbench_lib/``
REPO = Path(__file__).resolve().parents[2]
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")


class PathEscape(ValueError):
    """A path that resolves outside the root it must stay in."""


def inside(root: str | os.PathLike, path: str | os.PathLike) -> Path:
    """``root / path`` resolved (symlinks followed); ``PathEscape`` if it is not inside ``root``.

    Absolute paths and ``..`` are accepted only when they still land inside ``root``.
    """
    root_p = Path(root).resolve()
    p = (root_p / Path(path)).resolve()
    if p != root_p and root_p not in p.parents:
        raise PathEscape(f"path {str(path)!r} points outside its root {str(root_p)!r}")
    return p


def safe_name(name: str, max_len: int = 100) -> str:
    """A file name for ``name`` (an item id): unsafe characters replaced, no leading dot; when the
    name had to change, ``-<8 hex of its sha256>`` is appended so two ids never share a file."""
    name = str(name)
    clean = _UNSAFE.sub("_", name).lstrip(".")[:max_len] or "id"
    if clean != name:
        clean = f"{clean}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
    return clean


#: the longest file or folder name (bytes) of the usual file systems (ext4, xfs, btrfs, APFS, NTFS)
MAX_NAME = 255


def validate_run_id(run_id) -> str:
    """``run_id`` if it names one plain folder; else ``ValueError`` in one line.

    Refused: empty, ``.``/``..``, any path separator or NUL, and the names of the repository's
    source folders (``notebooks``, ``mmbench_lib``, ``tests``, ``params``, ``docs``, ...).
    """
    rid = str(run_id) if run_id is not None else ""
    seps = {"/", "\\", os.sep} | ({os.altsep} if os.altsep else set())
    why = None
    if not rid.strip():
        why = "it is empty"
    elif rid in (".", "..") or rid.strip(".") == "":
        why = "it names the current or parent folder"
    elif any(s in rid for s in seps) or "\x00" in rid:
        why = "it contains a path separator (a run id is one folder name under outputs/)"
    elif rid in SOURCE_FOLDERS or rid.lower() in SOURCE_FOLDERS:
        why = f"{rid!r} is a source folder of the repository"
    elif len(rid.encode("utf-8", "surrogatepass")) > MAX_NAME:
        why = f"it is {len(rid.encode('utf-8', 'surrogatepass'))} bytes; a folder name is at most {MAX_NAME}"
        rid = rid[:40] + "..."
    if why:
        raise ValueError(f"invalid run id {rid!r}: {why}; use a plain name such as 'seed_random_1'")
    return rid


def run_folder(outputs: str | os.PathLike, run_id: str) -> Path:
    """The folder of a run: ``outputs/<run_id>`` for a run id, or an absolute folder given by a
    caller (never inside a source folder of the repository)."""
    if os.path.isabs(str(run_id)):
        p = Path(run_id).resolve()
        for name in SOURCE_FOLDERS:
            src = (REPO / name).resolve()
            if p == src or src in p.parents:
                raise ValueError(f"invalid run folder {str(run_id)!r}: it is inside the source folder {str(src)!r}")
        return p
    return Path(outputs) / validate_run_id(run_id)


def outputs_root() -> Path:
    """``$MMBENCH_OUTPUTS`` (default ``outputs/`` of the repository): where run folders go."""
    return resolve(os.environ.get("MMBENCH_OUTPUTS", "outputs"))


def find_run(ref) -> Path | None:
    """The run folder ``ref`` names, the one resolver of every command, report and notebook: a folder (from
    the current folder, or absolute), else a run id or ``<run id>/<sub-run>`` under ``outputs/``, else a
    path from the repository root; ``None`` when it names none."""
    if ref is None or str(ref) == "":
        return None
    p = Path(str(ref)).expanduser()
    under = _under_outputs(p)
    if under is not None:  # ``outputs/<id>`` (the README's form) means $MMBENCH_OUTPUTS/<id> when that is set
        return under
    if p.is_dir():
        return p.absolute()
    if not p.is_absolute():
        for base in (outputs_root(), resolve(".")):
            if (base / p).is_dir():
                return base / p
    return None


def _under_outputs(p: Path) -> Path | None:
    """``outputs`` / ``outputs/<id>/...`` (relative, the default folder's name) read under ``$MMBENCH_OUTPUTS`` when
    it is set elsewhere: the folder there, or None (then ``find_run`` goes on; a literal folder still counts)."""
    if p.is_absolute() or not p.parts or p.parts[0] != "outputs" or "MMBENCH_OUTPUTS" not in os.environ:
        return None
    root = outputs_root()
    if root.resolve() == resolve("outputs").resolve():
        return None
    target = root.joinpath(*p.parts[1:])
    if target.is_dir():
        return target
    if not p.is_dir() or (p.is_dir() and not any(p.iterdir())):  # never the repository's empty outputs/ instead
        raise ValueError(f"{p}: no such run folder under MMBENCH_OUTPUTS={root} (outputs/ means that folder while "
                         f"MMBENCH_OUTPUTS is set)")
    return None


def check_outputs_root() -> Path:
    """:func:`outputs_root`, or ``ValueError`` in one line when it (or a folder above it) is a file."""
    root = outputs_root()
    for p in (root, *root.parents):
        if p.exists():
            if not p.is_dir():
                where = "MMBENCH_OUTPUTS" if "MMBENCH_OUTPUTS" in os.environ else "the outputs folder"
                raise ValueError(f"{where} {str(root)!r}: {str(p)!r} is a file, not a folder; point it at a folder")
            break
    return root


def make_run_id(label: str = "run") -> str:
    """A fresh run id: UTC time, the label, the short git commit."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    sha = (git_commit().get("commit") or "nogit")[:7]
    return f"{stamp}_{re.sub(r'[^A-Za-z0-9_.-]+', '-', label)}_{sha}"
