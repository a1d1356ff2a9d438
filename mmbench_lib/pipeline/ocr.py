"""OCR for the "LLM + OCR" baseline (MMMU §4.1, CMMMU §4.1): tesseract on each image, cached.

The papers used MMOCR (MMMU) and Mathpix (CMMMU); neither is available offline, so this suite
uses tesseract through ``pytesseract`` (``eng`` for MMMU, ``chi_sim`` for CMMMU) and records that
in the run manifest. The OCR text is put into the prompt by ``insert_ocr`` in one fixed format:

    each image placeholder (MMMU ``<image k>``; CMMMU ``<图片 k>``, i.e. the ``<img="...">`` tag after
    the official tag replacement) becomes ``[Image k OCR text: <text>]``

where ``<text>`` is tesseract's output with all whitespace runs collapsed to one space, or
``(no text found)`` when tesseract reads nothing. Images that no placeholder refers to are not
read (the prompt never mentions them).

Results are cached per image file content: ``$MMBENCH_CACHE/ocr/<sha256 of the file>_<lang>_psm<n>.txt``
(default ``~/.cache/mmbench/ocr``), so a rerun or a second model does not call tesseract again.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

from mmbench_lib.core.paths import safe_name

INSTALL_HINT = ("tesseract is not installed (needed by the OCR baseline). Install it with: "
                "sudo apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim "
                "(and `pip install pytesseract`)")
OCR_FORMAT = "[Image {k} OCR text: {text}]"
NO_TEXT = "(no text found)"
DEFAULT_PSM = 6  # "a single uniform block of text": reads the demo's labelled charts row by row


class OCRUnavailable(RuntimeError):
    """tesseract (or the language data, or pytesseract) is missing; the message says how to install it."""


def check_tesseract(lang: str = "eng") -> str:
    """The tesseract version; raises ``OCRUnavailable`` with the install command when it cannot run ``lang``."""
    try:
        import pytesseract
    except ImportError:
        raise OCRUnavailable(INSTALL_HINT) from None
    if shutil.which(pytesseract.pytesseract.tesseract_cmd) is None:
        raise OCRUnavailable(INSTALL_HINT)
    try:
        version = str(pytesseract.get_tesseract_version())
        langs = set(pytesseract.get_languages(config=""))
    except Exception as e:  # noqa: BLE001 - pytesseract raises several types
        raise OCRUnavailable(f"{INSTALL_HINT}; running it failed: {e}") from None
    missing = [p for p in lang.split("+") if p not in langs]
    if missing:
        raise OCRUnavailable(f"tesseract has no language data for {missing} (has {sorted(langs)}). {INSTALL_HINT}")
    return version


def cache_dir() -> Path:
    root = Path(os.environ.get("MMBENCH_CACHE") or Path.home() / ".cache" / "mmbench")
    return root / "ocr"


def clean(text: str) -> str:
    """Whitespace runs collapsed to one space; CJK characters tesseract splits with spaces rejoined."""
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"(?<=[\u3000-\u9fff\uff00-\uffef]) (?=[\u3000-\u9fff\uff00-\uffef])", "", text)


class OCR:
    """Tesseract reader with a per-image cache; ``calls`` counts real tesseract runs."""

    def __init__(self, lang: str = "eng", psm: int = DEFAULT_PSM, cache: str | os.PathLike | None = None):
        self.version = check_tesseract(lang)
        self.lang, self.psm = lang, psm
        self.cache = Path(cache) if cache is not None else cache_dir()
        self.calls = 0

    def read(self, path: str) -> str:
        data = Path(path).read_bytes()
        key = self.cache / f"{safe_name(f'{hashlib.sha256(data).hexdigest()}_{self.lang}_psm{self.psm}')}.txt"
        if key.is_file():
            return key.read_text(encoding="utf-8")
        import pytesseract
        from PIL import Image

        with Image.open(path) as im:
            text = clean(pytesseract.image_to_string(im.convert("RGB"), lang=self.lang, config=f"--psm {self.psm}"))
        self.calls += 1
        key.parent.mkdir(parents=True, exist_ok=True)
        tmp = key.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, key)
        return text

    def describe(self) -> dict:
        return {"engine": "tesseract", "version": self.version, "lang": self.lang, "psm": self.psm,
                "format": OCR_FORMAT, "empty": NO_TEXT, "cache": str(self.cache)}


def insert_ocr(prompt: str, placeholders: dict[int, str], texts: dict[int, str]) -> str:
    """Replace each placeholder ``placeholders[k]`` in ``prompt`` with ``[Image k OCR text: texts[k]]``."""
    for k, ph in placeholders.items():
        prompt = prompt.replace(ph, OCR_FORMAT.format(k=k, text=texts.get(k) or NO_TEXT))
    return prompt
