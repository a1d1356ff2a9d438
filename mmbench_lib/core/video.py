"""SEED-Bench v1 video frames: the official 8-frame index rule, decoded with PyAV.

SEED-Bench §3.4 and the official ``get_index(num_frames, k=8)`` (docs/protocols.md §1.4 items
6-7). The rule is reproduced exactly, including duplicate indices and fewer than 8 frames for
short segments (pitfall P-S9): it is not "fixed".
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image

from mmbench_lib.core.paths import inside

IMAGE_EXTS = {".png", ".jpg", ".jpeg", ".bmp", ".webp"}


def get_index(num_frames: int, k: int = 8) -> list[int]:
    """Official frame offsets: ``start + round(seg * i)`` with ``seg = (n-1)/k``.

    >>> get_index(100)
    [6, 18, 31, 43, 56, 68, 80, 93]
    >>> get_index(8)
    [0, 1, 2, 3, 4, 4, 5, 6]
    >>> get_index(5)
    [0, 1, 2, 3, 4]
    """
    if k > num_frames:
        return list(range(max(num_frames, 0)))
    seg = (num_frames - 1) / k
    start = int(seg / 2)
    # np.round is half-to-even, as in the official code
    return [start + int(np.round(seg * i)) for i in range(k)]


def frame_indices(rule: str, total_frames: int, fps: float, segment=None, k: int = 8) -> list[int]:
    """Frame indices for one question, by the per-source rule of docs/protocols.md §1.4 item 7.

    - ``whole_minus_last`` (dim 10, SSv2): ``get_index(len - 1)``; the last frame never counts.
    - ``seconds`` (dim 11, Epic-Kitchens, float segment in seconds):
      start/end frame = ``int(clip(t * fps, 0, len - 1))``; ``start + get_index(end - start)``.
    - ``frames`` (dim 12, Breakfast, int segment in frame numbers):
      ``end = min(end, len)``; ``start + get_index(end - start)``.
    """
    if rule == "whole_minus_last":
        return get_index(total_frames - 1, k)
    if rule == "seconds":
        if segment is None:
            raise ValueError("rule 'seconds' needs a segment")
        start = int(np.clip(float(segment[0]) * fps, 0, total_frames - 1))
        end = int(np.clip(float(segment[1]) * fps, 0, total_frames - 1))
        return [start + i for i in get_index(end - start, k)]
    if rule == "frames":
        if segment is None:
            raise ValueError("rule 'frames' needs a segment")
        start, end = int(segment[0]), min(int(segment[1]), total_frames)
        return [start + i for i in get_index(end - start, k)]
    raise ValueError(f"unknown frame rule {rule!r}")


def _probe(path: str) -> tuple[int, float]:
    """(frame count, average fps) from demuxed packets: no decoding, so long videos stay cheap."""
    import av

    with av.open(path) as container:
        stream = container.streams.video[0]
        fps = float(stream.average_rate) if stream.average_rate else 0.0
        n = sum(1 for pkt in container.demux(stream) if pkt.size)
    return n, fps


@lru_cache(maxsize=256)
def _probe_cached(path: str, mtime_ns: int, size: int) -> tuple[int, float]:
    return _probe(path)


def _decode_at(path: str, wanted: set[int]) -> tuple[dict[int, Image.Image], int]:
    """Decode frames in order, keeping only ``wanted`` indices; stops after the last one.
    Returns the kept frames and how many frames were decoded."""
    import av

    kept, count, last = {}, 0, max(wanted) if wanted else -1
    with av.open(path) as container:
        stream = container.streams.video[0]
        for i, frame in enumerate(container.decode(stream)):
            count = i + 1
            if i in wanted:
                kept[i] = frame.to_image()
            if i >= last:
                break
    return kept, count


def selected_frames(path: str | os.PathLike, rule: str, segment=None, k: int = 8) -> tuple[int, float, list[int]]:
    """(frame count, fps, indices the rule selects) from the demuxed packets, no decoding.
    ``ValueError`` when the video has no frames or the segment (empty or reversed) selects none."""
    path = str(path)
    st = os.stat(path)
    n, fps = _probe_cached(path, st.st_mtime_ns, st.st_size)
    if n == 0:
        raise ValueError(f"{path}: no video frames")
    idx = frame_indices(rule, n, fps, segment, k)
    if not idx:
        raise ValueError(f"{path}: segment {segment!r} (rule {rule!r}) selects no frame of its {n} frames (empty or reversed)")
    return n, fps, idx


def read_video_frames(path: str | os.PathLike, rule: str, segment=None, k: int = 8) -> list[Image.Image]:
    """The frames the official rule selects (``read_video_clip`` without the indices)."""
    return read_video_clip(path, rule, segment, k)[0]


def read_video_clip(path: str | os.PathLike, rule: str, segment=None, k: int = 8) -> tuple[list[Image.Image], list[int]]:
    """Decode a video with PyAV; return the frames the official rule selects and their indices.

    The frame count comes from the demuxed packets (one per frame) and fps from the stream's
    average rate, as decord reports them; only the selected frames are converted, and decoding
    stops after the last of them. If the decoder yields fewer frames than packets, the rule is
    applied again to the decoded count.
    """
    path = str(path)
    n, fps, idx = selected_frames(path, rule, segment, k)
    kept, decoded = _decode_at(path, set(idx))
    if any(i not in kept for i in idx):
        if decoded == 0:
            raise ValueError(f"{path}: no decodable video frames")
        _, decoded = _decode_at(path, {n})  # count every decodable frame
        idx = frame_indices(rule, decoded, fps, segment, k)
        if not idx:
            raise ValueError(f"{path}: segment {segment!r} selects no frame of the {decoded} decodable frames")
        kept, _ = _decode_at(path, set(idx))
    return [kept[i].copy() for i in idx], list(idx)


def _natural_key(p: Path):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)]


def list_frame_folder(folder: str | os.PathLike, root: str | os.PathLike | None = None) -> list[str]:
    """Pre-extracted frames: the images in a folder, in natural order (1.png, 2.png, ... 10.png).
    With ``root``, a frame (e.g. a symlink) resolving outside ``root`` raises ``PathEscape``."""
    folder = Path(folder)
    files = [p for p in folder.iterdir() if p.suffix.lower() in IMAGE_EXTS]
    if root is not None:
        for p in files:
            inside(root, p)
    return [str(p) for p in sorted(files, key=_natural_key)]
