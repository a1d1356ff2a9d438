"""The one record every benchmark loader produces.

Scorers, parsers, metrics and plots read only these fields, so they never branch on the
benchmark's name. Benchmark-specific knowledge stays in ``mmbench_lib.tasks.*``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class VideoClip:
    """A video and the rule that picks its frames (see ``mmbench_lib.core.video``).

    ``rule`` names the official per-source sampler: ``"whole_minus_last"`` (SEED v1 dim 10),
    ``"seconds"`` (dim 11, ``segment`` in seconds) or ``"frames"`` (dim 12, ``segment`` in
    frame numbers).
    """

    path: str
    rule: str
    segment: tuple[float, float] | None = None
    num_frames: int = 8


@dataclass
class Item:
    """One benchmark question.

    ``question`` keeps the benchmark's own image placeholders (``<img>`` for SEED-Bench-2,
    ``<image n>`` for MMMU, ``<img="...">`` for CMMMU); ``images`` lists the image files in
    the order the placeholders refer to them. ``answer`` is a letter for multiple choice,
    the gold string (or list of accepted strings) for open questions, ``None`` when withheld.
    """

    id: str
    benchmark: str
    question: str
    choices: list[str] = field(default_factory=list)
    answer: Any = None
    split: str = "test"
    dimension_id: int | None = None
    dimension: str = ""  # dimension name (SEED) or subject (MMMU/CMMMU)
    group: str = ""  # SEED: "image"/"video" or SEED-2 subpart; MMMU/CMMMU: discipline
    level: str | None = None
    part: int | None = None
    question_type: str = "multiple-choice"
    difficulty: str | None = None
    image_type: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    video: VideoClip | None = None
    choice_images: list[str] = field(default_factory=list)
    output: str = "text"  # what the model must produce: "text", "image", or "text+image" (SEED-2 dims 25-27)
    image_marker: str = ""  # literal placeholder in ``question`` standing for the next image, e.g. "<img>"
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def letters(self) -> list[str]:
        return list(LETTERS[: len(self.choices)])

    @property
    def answer_index(self) -> int | None:
        if isinstance(self.answer, str) and len(self.answer) == 1 and self.answer in self.letters:
            return self.letters.index(self.answer)
        return None

    @property
    def needs_image_output(self) -> bool:
        return self.output != "text"

    @property
    def is_video(self) -> bool:
        return self.video is not None or bool(self.frames)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class DataError(ValueError):
    """A dataset file is malformed. The message names the file, the item and the field."""

    def __init__(self, path: str, message: str, item_id: str | None = None, field: str | None = None):
        where = str(path)
        if item_id is not None:
            where += f", item {item_id!r}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")
        self.path, self.item_id, self.field = str(path), item_id, field


#: the largest text file (an annotation JSON, a JSON-lines file) read whole: SEED-Bench-2's JSON is ~30 MB
MAX_TEXT_BYTES = 1 << 30


def regular_file(path, limit: int | None = None) -> Path:
    """``path`` when it is a regular file of at most ``limit`` bytes; ``DataError`` otherwise (a FIFO, a
    device or a folder is never opened: reading one could block or never end)."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError as e:
        raise DataError(str(p), f"cannot be read ({e.strerror or e})") from None
    import stat

    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "not a regular file"
        raise DataError(str(p), f"expected a data file, found {kind}")
    if limit is not None and st.st_size > limit:
        raise DataError(str(p), f"file of {st.st_size:,} bytes is larger than the {limit:,} bytes read whole")
    return p


def read_utf8(path) -> str:
    """The file's text; not UTF-8 raises ``DataError`` naming the file and line; a file that is not a
    regular file, or larger than ``MAX_TEXT_BYTES``, is a ``DataError`` before anything is read."""
    raw = regular_file(path, MAX_TEXT_BYTES).read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise DataError(str(path), f"line {line}: not UTF-8 (byte 0x{raw[e.start]:02x})") from None
