"""MMMU: the Hugging Face layout (``MMMU/MMMU``, one config per subject, splits dev/validation/test).

docs/protocols.md §3.1 (schema), §3.2 (disciplines), §3.10 (pitfalls). ``source`` is a hub id
(read with ``datasets.load_dataset(source, subject, split=...)``) or a local folder holding the
hub repository's parquet files, ``<folder>/<Subject>/<split>-*.parquet``. Images are written once
to a cache folder as PNG, so ``Item.images`` are file paths; ``<image k>`` placeholders stay
verbatim in the question, and the images follow their first appearance in question then options
(P-M4: all referenced images are fed, unlike the official runner).
"""
from __future__ import annotations

import ast
import hashlib
import io
import os
import re
import sys
import warnings
from pathlib import Path

from mmbench_lib.core.items import DataError, Item, read_utf8
from mmbench_lib.core.paths import PathEscape, inside, safe_name
from mmbench_lib.tasks import mmmu_parser as parser
from mmbench_lib.tasks import mmmu_pro_parser
from mmbench_lib.tasks.mmmu_official import read_answer_dict, score_outputs
from mmbench_lib.tasks.modes import OFFICIAL, cot_modes, modes_of
from mmbench_lib.tasks.base import AuditPart, GenerationTask, Layout, PublishedColumn, register_task
from mmbench_lib.tasks.copies import mmmu as copies
from mmbench_lib.tasks.copies import tables
from mmbench_lib.tasks.copies.tables import default_cache_dir  # noqa: F401 - re-exported (cmmmu, callers)
from mmbench_lib.tasks.copies.tables import read_parquet
from mmbench_lib.tasks.recipes import Protocol

BENCHMARK = "mmmu"
HUB_ID = "MMMU/MMMU"
SPLITS = ("dev", "validation", "test")
SPLIT_ALIASES = {"val": "validation"}
NUM_IMAGE_COLUMNS = 7  # image_1 .. image_7 (docs/protocols.md §3.1)
PLACEHOLDER = re.compile(r"<image (\d+)>")
HUB_ID_RE = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")

#: HF ``question_type`` -> ours; the official key calls open questions "short-answer" (docs/protocols.md §3.1, §6.4).
QUESTION_TYPES = {"multiple-choice": "multiple-choice", "open": "short-answer", "short-answer": "short-answer"}

#: Discipline -> subjects, reused from the parser module (docs/protocols.md §3.2).
DISCIPLINES = parser.DISCIPLINES
SUBJECT_TO_DISCIPLINE = parser.SUBJECT_TO_DISCIPLINE
SUBJECTS: list[str] = [s for subs in DISCIPLINES.values() for s in subs]
#: Short key (``acc``) -> subject, in official processing order (docs/protocols.md §3.2, §3.7).
SHORT_KEYS = parser.SUBJECT_ORDER

#: Dimension id per subject (1-30, in the discipline table order), so ``metrics`` can group them.
SUBJECT_IDS: dict[str, int] = {s: i for i, s in enumerate(SUBJECTS, start=1)}
#: id -> (subject, discipline), the same shape the SEED modules use (name first).
DIMENSIONS: dict[int, tuple[str, str]] = {i: (s, SUBJECT_TO_DISCIPLINE[s]) for s, i in SUBJECT_IDS.items()}
#: Metric groups: each discipline ("Overall-<Discipline>") and "Overall", question-weighted (docs/protocols.md §3.8).
GROUPS: dict[str, tuple[int, ...]] = {
    **{d: tuple(SUBJECT_IDS[s] for s in subs) for d, subs in DISCIPLINES.items()},
    "Overall": tuple(SUBJECT_IDS[s] for s in SUBJECTS),
}

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def resolve_subject(name: str) -> str:
    """Full subject name for a config name, short key (``acc``) or spaced name ("Art Theory")."""
    if name in SUBJECT_IDS:
        return name
    if name in SHORT_KEYS:
        return SHORT_KEYS[name]
    folded = {s.lower(): s for s in SUBJECTS}
    key = name.strip().replace(" ", "_").lower()
    if key in folded:
        return folded[key]
    raise ValueError(f"unknown MMMU subject {name!r}; known: {SUBJECTS} or short keys {list(SHORT_KEYS)}")


def write_image(value, dest_dir: Path, stem: str, root=None) -> tuple[str | None, str | None]:
    """Write one HF image cell (PIL image, ``{"bytes", "path"}`` or raw bytes) as PNG, once.

    Returns ``(path, error)``. A cell with a ``path`` but no bytes is read only when the path is
    inside ``root`` (the data folder; none for the hub), never an absolute or ``..`` path elsewhere. The file name carries a hash of the source bytes, so a changed
    image gets a new file and an existing file is reused as is. PNG bytes are kept verbatim;
    other formats are decoded and re-encoded. Unreadable data gives ``(None, reason)``.
    """
    data, src_path = None, None
    if value is None:
        return None, "no image"
    if isinstance(value, (bytes, bytearray)):
        data = bytes(value)
    elif isinstance(value, dict):
        data, src_path = value.get("bytes"), value.get("path")
        if data is None and src_path:
            try:
                src = inside(root, src_path) if root is not None else None
            except PathEscape as e:
                return None, f"image has no bytes and its path is not a file inside the data folder ({e})"
            if src is not None and src.is_file():
                data = src.read_bytes()
    elif hasattr(value, "save"):  # a decoded PIL image
        buf = io.BytesIO()
        try:
            value.save(buf, format="PNG")
        except OSError:
            value.convert("RGB").save(buf, format="PNG")
        data = buf.getvalue()
    if not data:
        return None, f"image has no bytes{f' and its path {src_path!r} is not a file' if src_path else ''}"
    target = inside(dest_dir, f"{safe_name(stem)}-{hashlib.sha256(data).hexdigest()[:12]}.png")
    if target.is_file():
        return str(target), None
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
            if data.startswith(_PNG_SIGNATURE):
                out = data
            else:
                buf = io.BytesIO()
                try:
                    img.save(buf, format="PNG")
                except OSError:  # e.g. CMYK JPEG
                    img.convert("RGB").save(buf, format="PNG")
                out = buf.getvalue()
    except Exception as e:  # noqa: BLE001 - any decoder failure marks only this item
        return None, f"cannot decode image ({type(e).__name__}: {e})"
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(out)
    os.replace(tmp, target)
    return str(target), None


def placeholder_order(question: str, options: list[str]) -> list[int]:
    """Image numbers k in order of first appearance of ``<image k>`` in question, then options (docs/protocols.md §3.1, P-M4)."""
    seen: list[int] = []
    for text in [question, *options]:
        for m in PLACEHOLDER.finditer(text):
            k = int(m.group(1))
            if k not in seen:
                seen.append(k)
    return seen


def _parse_list(value, path, item_id, field) -> list:
    """A Python-list repr (``options``, ``img_type``) via ``ast.literal_eval``, never eval (P-M6);
    every entry a string (a ``None`` option is an error, never the text "None")."""
    if isinstance(value, (list, tuple)):
        return _strings(value, path, item_id, field)
    if value is None:
        raise DataError(str(path), "field is empty", item_id, field)
    try:
        out = parser.parse_options(value) if field == "options" else ast.literal_eval(value.strip() or "[]")
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
        raise DataError(str(path), f"not a Python list literal ({type(e).__name__}): {str(value)[:80]!r}", item_id, field) from None
    if not isinstance(out, (list, tuple)):
        raise DataError(str(path), f"expected a list, got {type(out).__name__}", item_id, field)
    return _strings(out, path, item_id, field)


def _strings(values, path, item_id, field) -> list[str]:
    """Strings kept, numbers written as the official f-string would; ``None``, booleans or nested values are a DataError."""
    bad = [v for v in values if v is None or isinstance(v, bool) or not isinstance(v, (str, int, float))]
    if bad:
        raise DataError(str(path), f"every entry must be a string, got {bad[0]!r}", item_id, field)
    return [str(v) for v in values]


def record_to_item(rec: dict, subject: str, split: str, path, image_dir: Path, data_root=None) -> Item:
    """One HF row -> ``Item`` (docs/protocols.md §3.1); raises DataError naming file, item and field."""
    qid = rec.get("id")
    if not isinstance(qid, str) or not qid:
        raise DataError(str(path), f"missing or non-string id {qid!r}", None, "id")
    for key in ("question", "options", "question_type"):
        if not isinstance(rec.get(key), str):
            raise DataError(str(path), f"expected a string, got {type(rec.get(key)).__name__}", qid, key)
    question = rec["question"]
    options = _parse_list(rec["options"], path, qid, "options")
    raw_type = rec["question_type"]
    if raw_type not in QUESTION_TYPES:
        raise DataError(str(path), f"unknown question_type {raw_type!r}; expected 'multiple-choice' or 'open'", qid, "question_type")
    qtype = QUESTION_TYPES[raw_type]
    if qtype == "multiple-choice" and not options:
        raise DataError(str(path), "multiple-choice question without options", qid, "options")

    answer = rec.get("answer")
    if split == "test" or answer in (None, "", "?"):
        gold = None  # withheld (docs/protocols.md §3.1)
    else:
        gold = parser.parse_gold(answer)
        if qtype == "multiple-choice":
            letters = [chr(ord("A") + i) for i in range(len(options))]
            for g in gold if isinstance(gold, list) else [gold]:
                if g not in letters:
                    raise DataError(str(path), f"answer {answer!r} is not one of the option letters {letters}", qid, "answer")

    order = placeholder_order(question, options)
    present = [k for k in range(1, NUM_IMAGE_COLUMNS + 1) if rec.get(f"image_{k}") is not None]
    for k in order:
        if not 1 <= k <= NUM_IMAGE_COLUMNS or rec.get(f"image_{k}") is None:
            where = "question" if f"<image {k}>" in question else "options"
            raise DataError(str(path), f"placeholder <image {k}> has no image (column image_{k} is empty or absent)", qid, where)
    unreferenced = [k for k in present if k not in order]
    images, errors = [], []
    for k in order + unreferenced:
        p, err = write_image(rec[f"image_{k}"], image_dir, f"{qid}_image_{k}", data_root)
        images.append(p or "")
        if err:
            errors.append(f"image_{k}: {err}")

    img_type = rec.get("img_type")
    image_type = _parse_list(img_type, path, qid, "img_type") if img_type not in (None, "") else []
    item = Item(
        id=qid, benchmark=BENCHMARK, split=split, question=question, choices=options if qtype == "multiple-choice" else [],
        answer=gold, dimension_id=SUBJECT_IDS[subject], dimension=subject, group=SUBJECT_TO_DISCIPLINE[subject],
        question_type=qtype, difficulty=rec.get("topic_difficulty") or None, image_type=image_type, images=images,
        meta={
            "subfield": rec.get("subfield"), "explanation": rec.get("explanation") or "",
            "image_tags": [f"<image {k}>" for k in order + unreferenced], "question_type_raw": raw_type,
            "source_file": str(path),
        },
    )
    if unreferenced:
        item.meta["unreferenced_images"] = [f"image_{k}" for k in unreferenced]
    option_images = {chr(ord("A") + i): o for i, o in enumerate(options) if PLACEHOLDER.fullmatch(o.strip())}
    if option_images:
        item.meta["option_images"] = option_images
    if isinstance(gold, list) and isinstance(answer, str):
        item.meta["answer_raw"] = answer  # HF list string (P-M2)
    if errors:
        item.meta["media_error"] = "; ".join(errors)
    return item


def _local_subjects(folder: Path) -> list[str]:
    return [s for s in SUBJECTS if (folder / s).is_dir()]


def _read_local(folder: Path, subject: str, split: str) -> tuple[str, list[dict]]:
    files = sorted((folder / subject).glob(f"{split}-*.parquet"))
    if not files:
        raise DataError(str(folder / subject), f"no {split}-*.parquet file for subject {subject!r}")
    rows = read_parquet(files)
    return (str(files[0]) if len(files) == 1 else str(folder / subject / f"{split}-*.parquet")), rows


def _is_local(source) -> bool:
    """True for a local folder; a hub id is ``owner/name`` that is not a local path; else DataError."""
    if Path(source).is_dir():
        return True
    if Path(source).exists() or not HUB_ID_RE.fullmatch(str(source)):
        raise DataError(str(source), "expected a local data folder or a hub id such as 'owner/name'")
    return False


def _read_hub(source: str, subject: str, split: str) -> tuple[str, list[dict]]:
    import datasets

    try:
        ds = datasets.load_dataset(source, subject, split=split)
    except (FileNotFoundError, ConnectionError) as e:
        raise DataError(f"{source}:{subject}/{split}", f"not a local folder, and the hub dataset could not be loaded ({e})") from None
    for k in range(1, NUM_IMAGE_COLUMNS + 1):  # raw {"bytes", "path"} cells: no decode + re-encode
        if f"image_{k}" in ds.column_names:
            ds = ds.cast_column(f"image_{k}", datasets.Image(decode=False))
    return f"{source}:{subject}/{split}", ds.to_list()


ANSWERS_FILE = "answer_dict_test.json"


def answers_for(source, split: str) -> Path | None:
    """The test answers found beside the data: ``answer_dict_test.json`` in the data folder (or the
    folder of a data file), for the test split only; ``None`` otherwise (test answers withheld)."""
    if split != "test" or source in (None, "") or not Path(source).exists():
        return None
    folder = Path(source) if Path(source).is_dir() else Path(source).parent
    for f in (folder / ANSWERS_FILE, folder.parent / ANSWERS_FILE if Path(source).is_file() else None):
        if f is not None and f.is_file():
            return f
    return None


def apply_answers(items: list[Item], path) -> list[Item]:
    """Items of the test split with their gold answers from an answer dict (docs/protocols.md §3.9); an item the
    file does not list stays withheld, a letter that names no option is a DataError."""
    answers = read_answer_dict(path)
    for it in items:
        rec = answers.get(it.id)
        if rec is None:
            continue
        gt = rec["ground_truth"]
        if it.question_type == "multiple-choice":
            letters = [chr(ord("A") + i) for i in range(len(it.choices))]
            for g in gt if isinstance(gt, list) else [gt]:
                if g not in letters:
                    raise DataError(str(path), f"ground truth {g!r} is not one of the option letters {letters}", it.id, "ground_truth")
        it.answer = gt
        it.meta["answer_source"] = str(path)
    return items


def _tsv_row(r: dict, path) -> dict:
    """A ``MMMU_DEV_VAL.tsv`` row (VLMEvalKit ``MMMUDataset``) as a per-config hub row: lettered options
    ``A``..``I`` (none for an open question), the ``id`` column or ``<split>_<category>_<index>``."""
    letters = [c for c in "ABCDEFGHI" if r.get(c) is not None]
    qid = r.get("id") or f"{r.get('split')}_{str(r['category']).replace(' ', '_')}_{r['index']}"
    images = tables.image_list(r.get("image"), path, qid, "image")
    rec = {"id": qid, "question": r.get("question") or "", "options": repr([r[c] for c in letters]),
           "question_type": "multiple-choice" if letters else "open", "answer": r.get("answer"),
           **{k: r.get(k) for k in ("explanation", "img_type", "topic_difficulty", "subfield") if r.get(k) is not None}}
    for k, data in enumerate(images, 1):
        rec[f"image_{k}"] = {"bytes": data, "path": None}
    return rec


#: what the merged hub copy and the VLMEvalKit TSV hold (``tasks/copies/mmmu.py``)
COPY_SHAPE = copies.RowsShape(
    "MMMU", ("id", "question", "options", "answer", "question_type"), "MMMU_*.tsv",
    ("index", "question", "answer", "category", "split", "image"), _tsv_row,
    lambda row: {"val": "validation"}.get(row.get("split"), row.get("split")))


def probe(source, split: str | None = None) -> str:
    """A cheap look at ``source``: ``per-config`` (``<Subject>/<split>-*.parquet``), ``merged``, ``tsv`` or
    ``hub`` (a hub id: held in the local hub cache, its layout probed too); DataError otherwise."""
    split = SPLIT_ALIASES.get(split, split) if split else DEFAULT_SPLIT
    hub = not Path(str(source)).exists()
    kind = copies.probe(COPY_SHAPE, source, split)
    if kind == "native":
        folder = tables.local_source(source)
        if folder is not None:
            files = sorted(Path(folder).glob(f"*/{split}-*.parquet"))
            if not files:
                raise DataError(str(folder), f"expected the MMMU per-subject layout (<Subject>/{split}-*.parquet), the "
                                             f"merged hub layout (data/{split}-*.parquet) or a VLMEvalKit TSV; found "
                                             f"{sorted(p.name for p in Path(folder).iterdir())[:8]}")
            tables.require_columns(files[0], tables.parquet_columns(files[0]), COPY_SHAPE.columns, "the MMMU hub parquet")
        kind = "per-config"
    return "hub" if hub else kind


def load(source: str | os.PathLike = HUB_ID, split: str = "validation", subjects: list[str] | str | None = None,
         cache_dir: str | os.PathLike | None = None, answers: str | os.PathLike | None = None) -> list[Item]:
    """Items of the given subjects (default all; names, short keys or spaced names) and split.

    ``source``: a hub id (``MMMU/MMMU``) or a local folder ``<folder>/<Subject>/<split>-*.parquet``;
    also the merged hub copy, a cached hub id and the VLMEvalKit TSV (``tasks/copies/mmmu.py``).
    ``cache_dir``: where images are written as PNG (default ``$MMBENCH_CACHE`` or
    ``~/.cache/mmbench``, under ``mmmu/<source>``). Subjects come out in the discipline table order,
    items in file order. The test split's answers are withheld unless ``answers`` names an
    ``answer_dict_test.json`` or the data folder holds one (``answers_for``).
    """
    items = _load(source, split, subjects, cache_dir)
    answers = answers or answers_for(source, SPLIT_ALIASES.get(split, split))
    return apply_answers(items, answers) if answers and SPLIT_ALIASES.get(split, split) == "test" else items


def _load(source, split, subjects, cache_dir) -> list[Item]:
    split = SPLIT_ALIASES.get(split, split)
    if split not in SPLITS:
        raise ValueError(f"unknown MMMU split {split!r}; use one of {SPLITS}")
    source = copies.native_source(source)  # a hub id held in the local hub cache: its folder
    copy = copies.rows(COPY_SHAPE, source, split)  # the merged hub copy or the VLMEvalKit TSV
    if copy is not None:
        cache = Path(cache_dir) if cache_dir is not None else default_cache_dir(str(source), BENCHMARK)
        return _items_of_rows(copy[0], copy[1], split, subjects, cache, copy[2])
    local = _is_local(source)
    if subjects is None or subjects == "all":
        chosen = _local_subjects(Path(source)) if local else list(SUBJECTS)
        if local and not chosen:
            raise DataError(str(source), f"no subject folders found (expected e.g. {source}/Accounting/{split}-*.parquet)")
    else:
        names = [subjects] if isinstance(subjects, str) else list(subjects)
        wanted = {resolve_subject(s) for s in names}
        chosen = [s for s in SUBJECTS if s in wanted]
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir(str(source), BENCHMARK)
    items: list[Item] = []
    seen: dict[str, str] = {}
    for subject in chosen:
        path, rows = _read_local(Path(source), subject, split) if local else _read_hub(str(source), subject, split)
        for rec in rows:
            item = record_to_item(rec, subject, split, path, cache / split / subject,
                                  Path(source) / subject if local else None)
            if item.id in seen:
                raise DataError(path, f"duplicate id (also in {seen[item.id]})", item.id, "id")
            seen[item.id] = path
            if parser.subject_from_id(item.id) not in (subject, ""):
                warnings.warn(f"{path}: id {item.id!r} names another subject than its config {subject!r}", stacklevel=2)
            items.append(item)
    return items


def _items_of_rows(where: str, recs: list[dict], split: str, subjects, cache: Path, data_root) -> list[Item]:
    """Items of a merged copy's rows (``tasks/copies``): grouped by the subject in each id (docs/protocols.md §3.1),
    subjects in table order, items in file order."""
    wanted = None if subjects in (None, "all") else {resolve_subject(s) for s in ([subjects] if isinstance(subjects, str) else subjects)}
    by_subject: dict[str, list[dict]] = {}
    for n, rec in enumerate(recs, 1):
        qid = rec.get("id")
        subject = parser.subject_from_id(qid) if isinstance(qid, str) else ""
        if subject not in SUBJECT_IDS:
            raise DataError(where, f"row {n}: expected an id '<split>_<Subject>_<n>' naming an MMMU subject, found {qid!r}",
                            qid, "id")
        by_subject.setdefault(subject, []).append(rec)
    items, seen = [], set()
    for subject in [s for s in SUBJECTS if s in by_subject and (wanted is None or s in wanted)]:
        for rec in by_subject[subject]:
            item = record_to_item(rec, subject, split, where, cache / split / subject, data_root)
            if item.id in seen:
                raise DataError(where, "duplicate id", item.id, "id")
            seen.add(item.id)
            items.append(item)
    return items


# --------------------------------------------------------------------------------------------- generation protocol
# What the generation pipeline (``mmbench_lib.pipeline.generation``) asks of this benchmark:
# the official prompt (docs/protocols.md §3.3), the OCR placeholders, the options a baseline may pick
# (MMMU §4.1), the official output files (§3.7) and the test-split submission (§3.9).

from collections import OrderedDict  # noqa: E402

from mmbench_lib.core.store import write_json_atomic  # noqa: E402

PROTOCOL = "generation"
DEFAULT_SPLIT = "validation"
VALIDATION_SPLIT = "validation"
OCR_LANG = "eng"
DEVIATIONS = [
    "P-M4: a vision-language model gets all images in placeholder order (question, then options), before the "
    "text; the official LLaVA runner feeds only image_1",
    "generation is greedy (do_sample=False) with our max_new_tokens; the official LLaVA-1.5 run sampled with "
    "num_beams=5, max_new_tokens=128",
    "chat template of the model applied to the official prompt (the official runner used the vicuna_v1 conversation)",
]


def load_split(source, split: str, subjects=None, cache_dir=None) -> list[Item]:
    """The items of one split (``subjects``: names or short keys; ``None`` for all)."""
    return load(source, split=split, subjects=subjects, cache_dir=cache_dir)


#: the CoT prompt (docs/protocols.md §5.2): MMMU publishes none; multiple choice gets MMMU-Pro's published CoT
#: instruction (``mmmu-pro/prompts.yaml``, standard setting; MMMU-Pro §3) in place of the official instruction,
#: open questions the same instruction worded for a short answer (ours)
COT_INSTRUCTIONS = {
    "multiple-choice": mmmu_pro_parser.PROMPTS["cot"]["standard"],
    "short-answer": "Answer the preceding question. The last line of your response should be of the following format: "
                    "'Answer: $ANSWER' (without quotes) where ANSWER is a single word, number or phrase. Think step by "
                    "step before answering.",
}
PROMPT_MODES = modes_of(OFFICIAL, *cot_modes(
    "MMMU publishes no CoT prompt: the official question and options, then MMMU-Pro's CoT instruction (prompts.yaml; "
    "open questions: the same wording for a short answer), docs/protocols.md §5.2"))


def generation_prompt(item: Item, style: str = "official") -> str:
    """The official prompt (docs/protocols.md §3.3); ``style="cot"``: the same question and options with the CoT
    instruction in place of the official one (``COT_INSTRUCTIONS``, docs/protocols.md §5.2)."""
    text = parser.prompt(item.question, item.choices, item.question_type)
    if style == "official":
        return text
    kind = parser.normalize_question_type(item.question_type)
    official = parser.MC_INSTRUCTION if kind == "multiple-choice" else parser.OPEN_INSTRUCTION
    return text[:-len(official)] + COT_INSTRUCTIONS[kind]


def image_placeholders(item: Item) -> list[tuple[int, str, str]]:
    """``(k, placeholder in the prompt, image path)`` for each ``<image k>`` the prompt refers to."""
    out = []
    for tag, path in zip(item.meta.get("image_tags") or [], item.images):
        m = re.fullmatch(r"<image (\d+)>", tag)
        if m:
            out.append((int(m.group(1)), tag, path))
    return out


def answer_kind(item: Item) -> str:
    """The kind the Frequent Choice baseline counts answers by: multiple-choice / short-answer."""
    return item.question_type


def baseline_choices(item: Item) -> list[str]:
    """The options Random Choice picks from: the letters of a multiple-choice question, else none."""
    return item.letters if item.question_type == "multiple-choice" else []


def baseline_answer(item: Item, value: str) -> str:
    """A frequent answer as given to ``item``: a letter beyond its options becomes "" (the official
    random fallback then decides)."""
    if item.question_type == "multiple-choice" and value not in item.letters:
        return ""
    return value


def write_official(items: list[Item], stored: dict, root: Path):
    """``root/<Subject>/output.json`` of the ok rows (docs/protocols.md §3.7); returns what
    ``rescoring.score_responses`` reads (``(root, None)``), or ``None`` when nothing is stored."""
    by_subject: dict[str, list[dict]] = OrderedDict()
    for it in items:
        r = stored.get(it.id)
        if r is None or r.get("status") != "ok":
            continue
        rec = {"id": it.id, "question_type": parser.normalize_question_type(it.question_type),
               "answer": it.meta.get("answer_raw", it.answer), "response": r["response"]}
        if it.question_type == "multiple-choice":
            index2ans, all_choices = parser.mc_info(it.choices)
            rec.update(all_choices=all_choices, index2ans=index2ans)
        by_subject.setdefault(it.dimension, []).append(rec)
    if root.exists():
        for old in root.glob("*/output.json"):
            old.unlink()
    for subject, recs in by_subject.items():
        (root / subject).mkdir(parents=True, exist_ok=True)
        write_json_atomic(root / subject / "output.json", recs)
    return (root, None) if by_subject else None


def write_submission(items: list[Item], stored: dict, rows: list[dict], out: Path) -> Path:
    """``submission.json``: ``{id: prediction}`` (MC: the parsed letter; open: the raw response,
    re-parsed by the scorer; docs/protocols.md §3.9)."""
    by_id = {r["id"]: r for r in rows}
    sub = {}
    for it in items:
        r = by_id.get(it.id)
        if r is None or r["status"] != "ok":
            continue
        sub[it.id] = r["parsed_pred"] if it.question_type == "multiple-choice" else r["response"]
    path = out / "submission.json"
    write_json_atomic(path, sub)
    return path


# --------------------------------------------------------------------------------------------- the task
class MMMUTask(GenerationTask):
    """MMMU: 30 subjects in 6 disciplines, generated answers parsed by the official parser."""
    audit = AuditPart("mmbench_lib.tasks.mmmu_audit")  # mmbench audit (docs/audit.md)

    name = BENCHMARK
    title = "MMMU"
    paper = "mmmu"
    order = 30
    error_table = ("MMMU Fig. 6 (GPT-4V, 150 errors)", "mmmu_fig6_errors")
    published_tables = ("mmmu_table2", "mmmu_table3_difficulty", "mmmu_table4_art_design", "mmmu_table5_business",
                        "mmmu_table6_science", "mmmu_table7_health_medicine", "mmmu_table8_humanities_social_sci",
                        "mmmu_table9_tech_engineering", "mmmu_table12_image_types", "mmmu_table13_few_shot",
                        "mmmu_fig6_errors", "mmmu_test_leaderboard")
    #: MMStar (arXiv 2403.20330) Tables 1-2: LLMs and LVLMs without images on MMMU-Val
    blind_reference = PublishedColumn(("mmstar_table1", "mmstar_table2"), "mmmu_val", "MMMU-Val",
                                      data=(("split", "validation"),))
    splits = SPLITS
    split_sizes = {"dev": 150, "validation": 900, "test": 10500}  # docs/protocols.md §3.2
    split_aliases = SPLIT_ALIASES
    default_split = DEFAULT_SPLIT
    validation_split = VALIDATION_SPLIT
    dimensions = DIMENSIONS
    groups = GROUPS
    group_kind = "subject"
    hub_id = HUB_ID
    layouts = (
        Layout("per-config", "the hub's per-subject layout (MMMU/MMMU): <Subject>/<split>-*.parquet"),
        Layout("merged", "the merged hub copy (lmms-lab/MMMU): data/<split>-*.parquet, or one such file"),
        Layout("hub", "a hub id (MMMU/MMMU, lmms-lab/MMMU) held in the local hub cache"),
        Layout("tsv", "VLMEvalKit MMMU_DEV_VAL.tsv (dev + validation; lettered options, base64 images)"),
    )
    ocr_lang = OCR_LANG
    official_output = "subject-folders"  # <root>/<Subject>/output.json (MMMU's main_parse_and_eval)
    official_output_help = ("DIR/<Subject>/output.json", "the test split's answer dict (answer_dict_test.json of the "
                            "official repository; optional: the other splits' gold answers are in output.json)")
    deviations = DEVIATIONS
    module = sys.modules[__name__]
    parser = parser
    prompt_modes = PROMPT_MODES
    parser_variants = {p.key: p for p in (
        Protocol("official", "official", "paper: MMMU §4.1 rules, official parser, random.Random(42) fallback"),
        Protocol("lenient-mc", "lenient MC", "NOT official: forgiving multiple-choice reader (markdown, 'C)', "
                 "lower case; P-M3)", rescore={"variant": "lenient-mc"}),
        Protocol("fixed-split", "open: split fixed", "NOT official: open answers split into sentences before "
                 "lower-casing (docs/protocols.md §3.5 step 2)", rescore={"variant": "fixed-split"}),
        Protocol("no-fallback", "no fallback", "NOT official: official rules, unparseable multiple choice scored "
                 "wrong (no-random mode, docs/protocols.md §3.7)", rescore={"use_random": False}),
    )}

    def resolve_subject(self, name: str) -> str:
        return resolve_subject(name)

    def probe(self, location, split=None, args: dict | None = None) -> str:
        return probe(location, split)

    def fallback_wins(self, row: dict, options: tuple) -> tuple:
        gold = parser.parse_gold(row["answer"])
        return tuple(o for o in options if parser.eval_multi_choice(gold, o))

    def selection_names(self) -> list[str]:
        return [*SUBJECTS, *SHORT_KEYS]

    def score_official(self, responses, answers=None, questions=None, **kw):
        """The official parse and eval of ``responses/<Subject>/output.json`` (``mmmu_official.score_outputs``;
        ``answers``: an answer dict, ``questions`` unused)."""
        return score_outputs(responses, answers=answers, **kw)


register_task(MMMUTask)
