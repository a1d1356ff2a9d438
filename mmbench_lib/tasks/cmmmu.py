"""CMMMU: the official repository layout and the Hugging Face layout (``m-a-p/CMMMU``).

docs/protocols.md §4.1 (data, both layouts), §4.2 (categories and subjects), §4.7 (pitfalls).

- Official: ``cmmmu-data-{dev,val,test}/<category_folder>/<category_folder>.jsonl`` with the
  image files beside it; ``<img="q_12487_001.png">`` tags in question and options name them.
- HF: ``<category_folder>/<split>-*.parquet`` locally, or a hub id read with
  ``datasets.load_dataset(source, category_folder, split=...)``; ``image_i_filename`` says which
  ``image_i`` column a tag refers to. HF images are written once to a cache folder as PNG.

Items keep the tags verbatim; ``Item.images`` follow the tags' first appearance in question,
then options 1-4 (the order lmms-eval feeds them, §4.1).
"""
from __future__ import annotations

import ast
import json
import os
import re
import sys
from pathlib import Path

from mmbench_lib.core.items import DataError, Item
from mmbench_lib.core.jsonl import parse_line, read_rows
from mmbench_lib.tasks import cmmmu_official as cofficial
from mmbench_lib.tasks import cmmmu_parser as parser
from mmbench_lib.tasks.modes import OFFICIAL, cot_modes, modes_of
from mmbench_lib.tasks.copies import mmmu as copies
from mmbench_lib.tasks.copies import tables
from mmbench_lib.tasks._common import media_path
from mmbench_lib.tasks.base import AuditPart, GenerationTask, Layout, register_task
from mmbench_lib.tasks.recipes import Protocol
from mmbench_lib.tasks.mmmu import HUB_ID_RE, write_image
from mmbench_lib.tasks.mmmu import default_cache_dir

BENCHMARK = "cmmmu"
HUB_ID = "m-a-p/CMMMU"
SPLITS = ("dev", "val", "test")
SPLIT_ALIASES = {"validation": "val"}
NUM_IMAGE_COLUMNS = 5  # image_1 .. image_5 on HF (docs/protocols.md §4.1)
IMG_TAG = re.compile(r'<img="([^"]+)">')

#: Chinese type -> ours (docs/protocols.md §4.1); the Chinese type stays in ``meta["type"]``.
QUESTION_TYPES = {"选择": "multiple-choice", "判断": "true-false", "填空": "fill-in-the-blank"}
TF_ANSWERS = ("对", "错")

CATEGORY_ORDER = parser.CATEGORY_ORDER  # official processing order (docs/protocols.md §4.5)
CATEGORY_EN = parser.CATEGORY_EN
CATEGORY_FOLDER = parser.CATEGORY_FOLDER
FOLDER_CATEGORY = {v: k for k, v in CATEGORY_FOLDER.items()}
SUBJECTS = parser.SUBJECTS

#: Dimension id per (category, Chinese subject): 1-30 in the table order of docs/protocols.md §4.2.
SUBJECT_IDS: dict[str, int] = {s: i for i, s in enumerate((s for c in CATEGORY_ORDER for s in SUBJECTS[c]), start=1)}
#: id -> (English subject, English category).
DIMENSIONS: dict[int, tuple[str, str]] = {
    SUBJECT_IDS[s]: (en, CATEGORY_EN[c]) for c in CATEGORY_ORDER for s, en in SUBJECTS[c].items()
}
#: Metric groups: the official scorer reports per category and Overall, micro (docs/protocols.md §4.5).
GROUPS: dict[str, tuple[int, ...]] = {
    **{CATEGORY_EN[c]: tuple(SUBJECT_IDS[s] for s in SUBJECTS[c]) for c in CATEGORY_ORDER},
    "Overall": tuple(range(1, len(SUBJECT_IDS) + 1)),
}


def resolve_category(name: str) -> str:
    """Chinese category for a Chinese name, English name or folder/config name."""
    for zh in CATEGORY_ORDER:
        if name in (zh, CATEGORY_EN[zh], CATEGORY_FOLDER[zh]):
            return zh
    raise ValueError(f"unknown CMMMU category {name!r}; use one of {list(CATEGORY_FOLDER.values())}")


def image_tags(question: str, options: list[str]) -> list[str]:
    """File names of ``<img="...">`` tags by first appearance in question, then options (docs/protocols.md §4.1)."""
    seen: list[str] = []
    for text in [question, *options]:
        for name in IMG_TAG.findall(text or ""):
            if name not in seen:
                seen.append(name)
    return seen


def _as_list(value) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        if value.lstrip().startswith("["):
            try:
                parsed = ast.literal_eval(value.strip())
                if isinstance(parsed, (list, tuple)):
                    return [str(v) for v in parsed]
            except (ValueError, SyntaxError):
                pass
        return [value]
    return [str(v) for v in value]


def record_to_item(rec: dict, category: str, split: str, path, images: list[str], errors: list[str],
                   tags: list[str]) -> Item:
    """One record (either layout) -> ``Item``; the caller resolves ``images`` for ``tags``."""
    qid = str(rec["id"])
    ctype = rec.get("type")
    subject_zh = rec.get("subcategory")
    if subject_zh not in SUBJECTS[category]:
        raise DataError(str(path), f"unknown subcategory {subject_zh!r} for category {category} "
                                   f"(known: {list(SUBJECTS[category])})", qid, "subcategory")
    answer = rec.get("answer")
    if split == "test" and answer in (None, ""):
        answer = None
    elif answer is None:
        raise DataError(str(path), "field missing", qid, "answer")
    elif ctype == "选择":
        if not isinstance(answer, str) or not answer or any(c not in "ABCD" for c in answer):
            raise DataError(str(path), f"multiple-choice answer must be letters A-D (e.g. 'AC'), got {answer!r}", qid, "answer")
        present = [chr(ord("A") + i) for i in range(4) if (rec.get(f"option{i + 1}") or "") != ""]
        absent = [c for c in answer if c not in present]
        if absent or len(set(answer)) != len(answer):
            raise DataError(str(path), f"answer {answer!r} names no existing option or repeats one (options present: "
                                       f"{present})", qid, "answer")
    elif ctype == "判断":
        if answer not in TF_ANSWERS:
            raise DataError(str(path), f"true/false answer must be 对 or 错, got {answer!r}", qid, "answer")
    else:
        answer = str(answer)
    options = [rec.get(f"option{i}") or "" for i in range(1, 5)] if ctype == "选择" else []
    item = Item(
        id=qid, benchmark=BENCHMARK, split=split, question=rec["question"], choices=options, answer=answer,
        dimension_id=SUBJECT_IDS[subject_zh], dimension=SUBJECTS[category][subject_zh], group=CATEGORY_EN[category],
        question_type=QUESTION_TYPES[ctype], difficulty=rec.get("difficulty_level") or None,
        image_type=_as_list(rec.get("img_type")), images=images,
        meta={
            "type": ctype, "category_zh": category, "subject_zh": subject_zh, "category_folder": CATEGORY_FOLDER[category],
            "subfield": _as_list(rec.get("subfield")), "distribution": rec.get("distribution"),
            "source_type": rec.get("source_type"), "source": rec.get("source"), "analysis": rec.get("analysis"),
            "img_list": _as_list(rec.get("img_list")), "image_tags": [f'<img="{t}">' for t in tags],
            "source_file": str(path),
        },
    )
    if errors:
        item.meta["media_error"] = "; ".join(errors)
    return item


def _alias(name) -> str | None:
    try:
        return resolve_category(str(name))
    except ValueError:
        return None


def _check_record(rec, path, where: str, category: str) -> None:
    if not isinstance(rec, dict):
        raise DataError(str(path), f"{where}: expected a JSON object, got {type(rec).__name__}")
    if rec.get("id") in (None, ""):
        raise DataError(str(path), f"{where}: field missing", None, "id")
    if not isinstance(rec["id"], (str, int)) or isinstance(rec["id"], bool):
        raise DataError(str(path), f"{where}: an id is a string or an integer, got {type(rec['id']).__name__}", None, "id")
    qid = str(rec["id"])
    if rec.get("type") not in QUESTION_TYPES:
        raise DataError(str(path), f"unknown type {rec.get('type')!r}; expected 选择, 判断 or 填空", qid, "type")
    if not isinstance(rec.get("question"), str):
        raise DataError(str(path), f"expected a string, got {type(rec.get('question')).__name__}", qid, "question")
    if rec["type"] == "选择":  # a null option is an error, never the text "None"; a fifth is never dropped
        for i in range(1, 5):
            if not isinstance(rec.get(f"option{i}"), str):
                raise DataError(str(path), f"expected a string, got {type(rec.get(f'option{i}')).__name__}", qid, f"option{i}")
        extra = sorted(k for k, v in rec.items() if re.fullmatch(r"option\d+", str(k)) and int(k[6:]) > 4 and v not in (None, ""))
        if extra:
            raise DataError(str(path), f"unexpected extra option(s) {extra}; CMMMU has option1-option4", qid, extra[0])
    if rec.get("category") not in (None, "", category) and _alias(rec["category"]) != category:
        raise DataError(str(path), f"category {rec['category']!r} does not match its folder ({CATEGORY_FOLDER[category]})", qid, "category")


def read_jsonl(path: Path) -> list[dict]:
    """Records of a JSONL file; a bad line raises DataError naming file and line."""
    if not path.is_file():
        raise DataError(str(path), "file not found")
    return [rec for _n, rec in read_rows(path, objects=False)]  # core.jsonl: bounded, not a FIFO, one-line errors


def _load_official(split_dir: Path, category: str, split: str) -> list[Item]:
    folder = split_dir / CATEGORY_FOLDER[category]
    path = folder / f"{CATEGORY_FOLDER[category]}.jsonl"
    items = []
    for n, rec in enumerate(read_jsonl(path), 1):
        _check_record(rec, path, f"line {n}", category)
        options = [rec.get(f"option{i}") or "" for i in range(1, 5)] if rec["type"] == "选择" else []
        tags = image_tags(rec["question"], options)
        listed = [t for t in _as_list(rec.get("img_list")) if t not in tags]
        images, errors = [], []
        for name in tags + listed:  # listed but untagged files go last
            p, err = media_path(folder, name)
            if err is None and not Path(p).is_file():
                err = "file not found"
            images.append(p)
            if err:
                errors.append(f"{name}: {err}")
        items.append(record_to_item(rec, category, split, path, images, errors, tags + listed))
    return items


def _hf_images(rec: dict, path, category: str, split: str, cache: Path, data_root=None) -> Item:
    qid = str(rec["id"])
    options = [rec.get(f"option{i}") or "" for i in range(1, 5)] if rec["type"] == "选择" else []
    tags = image_tags(rec["question"], options)
    by_name = {rec.get(f"image_{i}_filename"): i for i in range(1, NUM_IMAGE_COLUMNS + 1) if rec.get(f"image_{i}_filename")}
    images, errors = [], []
    for name in tags:
        if name not in by_name:
            where = "question" if f'<img="{name}">' in rec["question"] else "options"
            raise DataError(str(path), f'tag <img="{name}"> has no image (no image_i_filename names it)', qid, where)
        i = by_name[name]
        p, err = write_image(rec.get(f"image_{i}"), cache / split / CATEGORY_FOLDER[category], f"{qid}_{Path(name).stem}",
                             data_root)
        images.append(p or "")
        if err:
            errors.append(f"image_{i} ({name}): {err}")
    return record_to_item(rec, category, split, path, images, errors, tags)


def _load_hf_rows(rows: list[dict], path, category: str, split: str, cache: Path, data_root=None) -> list[Item]:
    items = []
    for n, rec in enumerate(rows, 1):
        _check_record(rec, path, f"row {n}", category)
        items.append(_hf_images(rec, path, category, split, cache, data_root))
    return items


def _read_parquet(folder: Path, category: str, split: str) -> tuple[str, list[dict]]:
    import pyarrow.parquet as pq

    files = sorted((folder / CATEGORY_FOLDER[category]).glob(f"{split}-*.parquet"))
    if not files:
        raise DataError(str(folder / CATEGORY_FOLDER[category]), f"no {split}-*.parquet file")
    rows = []
    for f in files:
        try:
            rows.extend(pq.read_table(f).to_pylist())
        except Exception as e:  # noqa: BLE001
            raise DataError(str(f), f"not a readable parquet file ({type(e).__name__}: {e})") from None
    return str(files[0]) if len(files) == 1 else str(files[0].parent / f"{split}-*.parquet"), rows


def _read_hub(source: str, category: str, split: str) -> tuple[str, list[dict]]:
    import datasets

    where = f"{source}:{CATEGORY_FOLDER[category]}/{split}"
    try:
        ds = datasets.load_dataset(source, CATEGORY_FOLDER[category], split=split)
    except (FileNotFoundError, ConnectionError) as e:
        raise DataError(where, f"not a local folder, and the hub dataset could not be loaded ({e})") from None
    for i in range(1, NUM_IMAGE_COLUMNS + 1):
        if f"image_{i}" in ds.column_names:
            ds = ds.cast_column(f"image_{i}", datasets.Image(decode=False))
    return where, ds.to_list()


def _items_of_rows(where: str, recs: list[dict], split: str, categories, cache: Path, data_root) -> list[Item]:
    """Items of a merged copy's rows (``tasks/copies``): grouped by ``category`` (or the category of
    ``subcategory``), in official category order."""
    of_subject = {s: c for c in CATEGORY_ORDER for s in SUBJECTS[c]}
    wanted = None if categories in (None, "all") else {
        resolve_category(c) for c in ([categories] if isinstance(categories, str) else categories)}
    by_category: dict[str, list[dict]] = {}
    for n, rec in enumerate(recs, 1):
        cat = _alias(rec.get("category")) if rec.get("category") else of_subject.get(rec.get("subcategory"))
        if cat is None:
            raise DataError(where, f"row {n}: expected a CMMMU category or subcategory, found "
                                   f"{rec.get('category')!r} / {rec.get('subcategory')!r}", rec.get("id"), "category")
        by_category.setdefault(cat, []).append(rec)
    items, seen = [], set()
    for cat in [c for c in CATEGORY_ORDER if c in by_category and (wanted is None or c in wanted)]:
        for item in _load_hf_rows(by_category[cat], where, cat, split, cache, data_root):
            if item.id in seen:
                raise DataError(where, "duplicate id", item.id, "id")
            seen.add(item.id)
            items.append(item)
    return items


def detect_layout(source) -> tuple[str, Path | None]:
    """``("official", root)``, ``("hf-local", root)`` or ``("hub", None)`` for a source."""
    root = Path(source)
    if root.is_dir():
        if any((root / f"cmmmu-data-{s}").is_dir() for s in SPLITS) or any(
                (root / f / f"{f}.jsonl").is_file() for f in FOLDER_CATEGORY):
            return "official", root
        if any((root / f).is_dir() and any((root / f).glob("*.parquet")) for f in FOLDER_CATEGORY):
            return "hf-local", root
        raise DataError(str(root), "neither the official layout (cmmmu-data-<split>/<category>/<category>.jsonl) "
                                   "nor the HF layout (<category>/<split>-*.parquet)")
    if root.exists() or not HUB_ID_RE.fullmatch(str(source)):
        raise DataError(str(source), "expected a local data folder or a hub id such as 'm-a-p/CMMMU'")
    return "hub", None


def _tsv_row(r: dict, path) -> dict:
    """A ``CMMMU_VAL.tsv`` row (VLMEvalKit ``cmmmu.py``) as a per-category hub row: its images, in the order of
    the ``<img="...">`` tags, become ``image_i`` / ``image_i_filename``."""
    qid = r.get("id") or r["index"]
    options = [r.get(f"option{i}") or "" for i in range(1, 5)] if r.get("type") == "选择" else []
    tags = image_tags(r.get("question") or "", options)
    images = tables.image_list(r.get("image"), path, qid, "image")
    if len(images) != len(tags):
        raise DataError(str(path), f"expected one image per <img> tag ({len(tags)}), found {len(images)}", qid, "image")
    rec = {k: v for k, v in r.items() if k not in ("image", "index", "split")}
    rec["id"] = qid
    for i, (tag, data) in enumerate(zip(tags, images), 1):
        rec[f"image_{i}"], rec[f"image_{i}_filename"] = {"bytes": data, "path": None}, tag
    return rec


#: what the merged hub copy and the VLMEvalKit TSV hold (``tasks/copies/mmmu.py``)
COPY_SHAPE = copies.RowsShape(
    "CMMMU", ("id", "type", "question", "answer", "subcategory"), "CMMMU_*.tsv",
    ("index", "question", "type", "answer", "category", "image"), _tsv_row,
    lambda row: {"validation": "val"}.get(row.get("split"), row.get("split")) if row.get("split") else None)
JSONL_NEEDED = ("id", "type", "question", "subcategory")


def probe(source, split: str | None = None) -> str:
    """A cheap look at ``source``: ``official`` (``cmmmu-data-<split>/<category>/<category>.jsonl``), ``per-config``
    (``<category>/<split>-*.parquet``), ``merged``, ``tsv`` or ``hub`` (a hub id); DataError otherwise."""
    import json

    split = SPLIT_ALIASES.get(split, split) if split else DEFAULT_SPLIT
    hub = not Path(str(source)).exists()
    kind = copies.probe(COPY_SHAPE, source, split)
    folder = tables.local_source(source) if kind == "native" else None
    if folder is None:
        return "hub" if hub else kind
    folder = Path(folder)
    jsonl = sorted(folder.glob(f"cmmmu-data-{split}/*/*.jsonl")) or sorted(folder.glob("*/*.jsonl"))
    if jsonl:
        with open(tables.regular_file(jsonl[0]), encoding="utf-8", errors="replace") as f:
            first = f.readline(1 << 24)
        rec, problem = parse_line(first, objects=False) if first.strip() else ({}, None)  # core.jsonl's parse
        if problem:
            raise DataError(str(jsonl[0]), "expected JSON lines, found invalid JSON on line 1")
        tables.require_columns(jsonl[0], rec if isinstance(rec, dict) else {}, JSONL_NEEDED, "the CMMMU JSONL")
        return "hub" if hub else "official"
    files = sorted(folder.glob(f"*/{split}-*.parquet"))
    if not files:
        raise DataError(str(folder), f"expected the CMMMU official layout (cmmmu-data-{split}/<category>/<category>.jsonl), "
                                     f"the per-category hub layout (<category>/{split}-*.parquet), the merged hub layout "
                                     f"(data/{split}-*.parquet) or a VLMEvalKit TSV; found "
                                     f"{sorted(p.name for p in folder.iterdir())[:8]}")
    tables.require_columns(files[0], tables.parquet_columns(files[0]), JSONL_NEEDED, "the CMMMU hub parquet")
    return "hub" if hub else "per-config"


def load(source: str | os.PathLike = HUB_ID, split: str = "val", categories: list[str] | str | None = None,
         cache_dir: str | os.PathLike | None = None) -> list[Item]:
    """Items of the given categories (default all six) and split, in official category order.

    ``source``: the official data root (holding ``cmmmu-data-<split>/``) or one
    ``cmmmu-data-<split>`` folder; a local HF-layout folder (``<category>/<split>-*.parquet``); or
    a hub id (``m-a-p/CMMMU``). ``cache_dir``: where HF images are written as PNG (default under
    ``$MMBENCH_CACHE`` or ``~/.cache/mmbench``); the official layout's files are used in place.
    Also the merged hub copy, a cached hub id and the VLMEvalKit TSV (``tasks/copies/mmmu.py``).
    """

    split = SPLIT_ALIASES.get(split, split)
    if split not in SPLITS:
        raise ValueError(f"unknown CMMMU split {split!r}; use one of {SPLITS}")
    source = copies.native_source(source)  # a hub id held in the local hub cache: its folder
    copy = copies.rows(COPY_SHAPE, source, split)  # the merged hub copy or the VLMEvalKit TSV
    if copy is not None:
        cache = Path(cache_dir) if cache_dir is not None else default_cache_dir(str(source), BENCHMARK)
        return _items_of_rows(copy[0], copy[1], split, categories, cache, copy[2])
    layout, root = detect_layout(source)
    if layout == "official" and (root / f"cmmmu-data-{split}").is_dir():
        root = root / f"cmmmu-data-{split}"
    elif layout == "official" and not any((root / f / f"{f}.jsonl").is_file() for f in FOLDER_CATEGORY):
        raise DataError(str(root), f"no cmmmu-data-{split} folder")
    if categories is None or categories == "all":
        if layout == "hub":
            chosen = list(CATEGORY_ORDER)
        else:
            chosen = [c for c in CATEGORY_ORDER if (root / CATEGORY_FOLDER[c]).is_dir()]
    else:
        wanted = {resolve_category(c) for c in ([categories] if isinstance(categories, str) else categories)}
        chosen = [c for c in CATEGORY_ORDER if c in wanted]
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir(str(source), BENCHMARK)
    items: list[Item] = []
    seen: dict[str, str] = {}
    for category in chosen:
        if layout == "official":
            got = _load_official(root, category, split)
        else:
            path, rows = _read_parquet(root, category, split) if layout == "hf-local" else _read_hub(str(source), category, split)
            got = _load_hf_rows(rows, path, category, split, cache, root / CATEGORY_FOLDER[category] if root else None)
        for item in got:
            if item.id in seen:
                raise DataError(item.meta["source_file"], f"duplicate id (also in {seen[item.id]})", item.id, "id")
            seen[item.id] = item.meta["source_file"]
        items.extend(got)
    return items


# --------------------------------------------------------------------------------------------- generation protocol
# What the generation pipeline (``mmbench_lib.pipeline.generation``) asks of this benchmark:
# the lmms-eval prompts (docs/protocols.md §4.3), the OCR placeholders, the options a baseline may pick
# (CMMMU §4.1), the official response / gold files (§4.5) and the test-split submission (§4.6).

PROTOCOL = "generation"
DEFAULT_SPLIT = "val"
VALIDATION_SPLIT = "val"
OCR_LANG = "chi_sim"
DEVIATIONS = [
    "prompts are lmms-eval's CMMMU task text (docs/protocols.md §4.3), assumed to be the authors'",
    "a vision-language model gets all images in tag order (question, then options), before the text",
    "generation is greedy (do_sample=False) with our max_new_tokens (lmms-eval uses 16)",
]
#: ours -> the Chinese answer kind (inverse of ``QUESTION_TYPES``)
CHINESE_TYPES = {v: k for k, v in QUESTION_TYPES.items()}


def load_split(source, split: str, subjects=None, cache_dir=None) -> list[Item]:
    """The items of one split (``subjects``: categories, Chinese or English; ``None`` for all)."""
    return load(source, split=split, categories=subjects, cache_dir=cache_dir)


def cmmmu_type(item: Item) -> str:
    """The Chinese answer kind: 选择, 判断 or 填空."""
    return item.meta.get("type") or CHINESE_TYPES[item.question_type]


#: the CoT prompt (docs/protocols.md §5.3): CMMMU publishes none; the official prompt with its closing
#: ``正确答案：`` replaced by a step-by-step instruction asking for a last ``答案：`` line (ours, after MMMU-Pro's
#: CoT instruction), per question type
COT_ENDINGS = {
    "选择": "请一步一步地思考，然后作答。回答的最后一行必须是以下格式：“答案：$LETTER”（不含引号），其中 LETTER 是选项字母之一。\n",
    "判断": "请一步一步地思考，然后作答。回答的最后一行必须是以下格式：“答案：$ANSWER”（不含引号），其中 ANSWER 是“对”或“错”。\n",
    "填空": "请一步一步地思考，然后作答。回答的最后一行必须是以下格式：“答案：$ANSWER”（不含引号），其中 ANSWER 是最终答案。\n",
}
PROMPT_MODES = modes_of(OFFICIAL, *cot_modes(
    "CMMMU publishes no CoT prompt: the official prompt with its closing 正确答案： replaced by a step-by-step "
    "instruction asking for a last 答案： line (ours), docs/protocols.md §5.3"))


def generation_prompt(item: Item, style: str = "official") -> str:
    """The lmms-eval CMMMU prompt with its Chinese instruction (docs/protocols.md §4.3); ``style="cot"``: its
    closing ``正确答案：`` replaced by the CoT instruction of the question type (``COT_ENDINGS``, §5.3)."""
    names = [IMG_TAG.fullmatch(t).group(1) for t in item.meta.get("image_tags") or []]
    text = parser.prompt(item.question, item.choices, cmmmu_type(item), image_filenames=names)
    if style == "official":
        return text
    closing = "正确答案：\n"
    if not text.endswith(closing):
        raise ValueError(f"item {item.id!r}: the official prompt does not end with {closing!r}")
    return text[:-len(closing)] + COT_ENDINGS[cmmmu_type(item)]


def image_placeholders(item: Item) -> list[tuple[int, str, str]]:
    """``(k, placeholder in the prompt, image path)``: the prompt names images ``<图片 k>``."""
    return [(i, f"<图片 {i}>", path) for i, (_tag, path) in enumerate(zip(item.meta.get("image_tags") or [], item.images), 1)]


def answer_kind(item: Item) -> str:
    """The kind the Frequent Choice baseline counts answers by: 选择 / 判断 / 填空."""
    return cmmmu_type(item)


def baseline_choices(item: Item) -> list[str]:
    """The options Random Choice picks from: one letter of A-D, 对/错, or none for fill-in."""
    return {"选择": list(parser.MC_CHOICES), "判断": list(parser.TF_CHOICES)}.get(cmmmu_type(item), [])


def baseline_answer(item: Item, value: str) -> str:
    """A frequent answer as given to ``item`` (unchanged: the official parser judges it)."""
    return value


def write_official(items: list[Item], stored: dict, root: Path):
    """``root/responses.jsonl`` and ``root/gold.jsonl`` of the ok rows (docs/protocols.md §4.5); returns what
    ``rescoring.score_responses`` reads (``(responses, gold)``), or ``None`` when no stored item
    has a gold answer (test split)."""
    root.mkdir(parents=True, exist_ok=True)
    resp, gold = root / "responses.jsonl", root / "gold.jsonl"
    has_gold = False
    with open(resp, "w", encoding="utf-8") as fr, open(gold, "w", encoding="utf-8") as fg:
        for it in items:
            r = stored.get(it.id)
            if r is None or r.get("status") != "ok":
                continue
            has_gold = has_gold or it.answer is not None
            ctype = cmmmu_type(it)
            fr.write(json.dumps({"id": it.id, "type": ctype, "response": r["response"]}, ensure_ascii=False) + "\n")
            g = {"id": it.id, "type": ctype, "answer": it.answer, "category": it.meta["category_zh"],
                 "subcategory": it.meta["subject_zh"]}
            if ctype == "选择":
                g.update({f"option{i}": (it.choices[i - 1] if i <= len(it.choices) else "") for i in range(1, 5)})
            fg.write(json.dumps(g, ensure_ascii=False) + "\n")
    return (resp, gold) if has_gold else None


def write_submission(items: list[Item], stored: dict, rows: list[dict], out: Path) -> Path:
    """``submission.jsonl``: response-mode rows ``{id, type, response}`` (docs/protocols.md §4.6)."""
    path = out / "submission.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for it in items:
            r = stored.get(it.id)
            if r is not None and r["status"] == "ok":
                f.write(json.dumps({"id": it.id, "type": cmmmu_type(it), "response": r["response"]}, ensure_ascii=False) + "\n")
    return path


# --------------------------------------------------------------------------------------------- the task
class CMMMUTask(GenerationTask):
    """CMMMU: 30 subjects in 6 categories (selected by category), lmms-eval prompts, the official parser."""
    audit = AuditPart("mmbench_lib.tasks.cmmmu_audit")  # mmbench audit (docs/audit.md)

    name = BENCHMARK
    title = "CMMMU"
    paper = "mmmu"
    order = 40
    error_table = ("CMMMU Fig. 4 (GPT-4V, 141 errors)", "cmmmu_fig4_errors")
    published_tables = ("cmmmu_table4", "cmmmu_table5_question_type", "cmmmu_table6_difficulty", "cmmmu_fig4_errors")
    splits = SPLITS
    split_sizes = {"val": 900}  # docs/protocols.md §4.1 (dev and test sizes are not published exactly)
    split_aliases = SPLIT_ALIASES
    default_split = DEFAULT_SPLIT
    validation_split = VALIDATION_SPLIT
    dimensions = DIMENSIONS
    groups = GROUPS
    group_kind = "category"
    subjects_arg = "categories"
    hub_id = HUB_ID
    layouts = (
        Layout("official", "the official release: cmmmu-data-<split>/<category>/<category>.jsonl with the images beside"),
        Layout("per-config", "the hub's per-category layout (m-a-p/CMMMU): <category>/<split>-*.parquet"),
        Layout("merged", "the merged hub copy (lmms-lab/CMMMU): data/<split>-*.parquet, or one such file"),
        Layout("hub", "a hub id (m-a-p/CMMMU, lmms-lab/CMMMU) held in the local hub cache"),
        Layout("tsv", "VLMEvalKit CMMMU_VAL.tsv (val; images in the order of the <img> tags)"),
    )
    ocr_lang = OCR_LANG
    demo_source_key = "root"  # the demo writes the official layout under <root>/cmmmu-data-<split>/
    official_output = "responses-and-gold-jsonl"  # responses.jsonl {id, type, response} + gold rows (§4.5)
    official_output_help = ("a JSONL file or folder of {id, type, response} rows",
                            "gold rows {id, type, answer} (a file or the split's data folder)")
    deviations = DEVIATIONS
    module = sys.modules[__name__]
    parser = parser
    prompt_modes = PROMPT_MODES
    parser_variants = {p.key: p for p in (
        Protocol("official", "official", "paper: CMMMU §4.1 rules, official parser, random.Random(42) fallback"),
        Protocol("tf-fixed", "T/F negation fixed", "NOT official: negative keywords tested first, so "
                 "'不正确' votes false (docs/protocols.md §4.4)", rescore={"fixed_tf": True}),
        Protocol("no-fallback", "no fallback", "NOT official: official rules, MC fallbacks and T/F ties scored "
                 "wrong", rescore={"use_random": False}),
    )}

    def resolve_subject(self, name: str) -> str:
        return resolve_category(name)

    def probe(self, location, split=None, args: dict | None = None) -> str:
        return probe(location, split)

    def fallback_wins(self, row: dict, options: tuple) -> tuple:
        judge = parser.eval_multi_choice if row["type"] == "选择" else parser.eval_true_false
        return tuple(o for o in options if judge(row["answer"], o))

    def selection_names(self) -> list[str]:
        return [*CATEGORY_ORDER, *CATEGORY_EN.values(), *CATEGORY_FOLDER.values()]

    def score_official(self, responses, answers=None, questions=None, **kw):
        """``eval_script.py``'s scoring of response rows against gold rows (``cmmmu_official.score_outputs``);
        ValueError, one line, without ``answers``."""
        if answers is None:
            raise ValueError("this format needs --answers (gold rows {id, type, answer}, e.g. the data folder of the split)")
        return cofficial.score_outputs(responses, answers, questions, **kw)


register_task(CMMMUTask)
