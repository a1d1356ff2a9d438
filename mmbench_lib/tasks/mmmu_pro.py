"""MMMU-Pro (``MMMU/MMMU_Pro``): 1,730 MMMU questions, 30 subjects, three settings, two prompts.

Paper: MMMU-Pro (Yue et al., arXiv 2409.02813) §2.1-2.3 (text-only filtering, options augmented
to up to 10, the vision setting: one screenshot holding question and options), §3 (direct and CoT
prompts; the leaderboard's MMMU-Pro score is the mean of "standard (10 options)" and "vision").
Official code: ``mmmu-pro/`` of MMMU-Benchmark/MMMU; prompts and extraction in ``mmmu_pro_parser``.

Hub configs, one split ``test`` each (docs/protocols.md has the MMMU schema, §3.1):
``standard (4 options)`` and ``standard (10 options)``: id, question, options (a Python-list
string, up to 10 entries, A-J), explanation, image_1..image_7, img_type, answer (letter),
topic_difficulty, subject; ``vision``: id, image (the screenshot), options, answer, subject.
``source`` is the hub id or a local folder holding ``<config>/**/*.parquet`` (hub layout or the
parquet-converter's ``<config>/test/0000.parquet``).

A run's ``split`` names setting and method: ``standard10-direct`` (default: the leaderboard's
setting), ``standard10-cot``, ``standard4-direct``, ``standard4-cot``, ``vision-direct``,
``vision-cot``.
"""
from __future__ import annotations

import json
import os
import random
import re
from collections import OrderedDict
from pathlib import Path

from mmbench_lib.core.items import DataError, Item
from mmbench_lib.core.jsonl import read_rows
from mmbench_lib.core.metrics import entry
from mmbench_lib.core.store import write_json_atomic
from mmbench_lib.tasks.copies import tables as copy_tables
from mmbench_lib.tasks.copies.mmmu import native_source
from mmbench_lib.tasks.copies.tables import read_parquet
from mmbench_lib.tasks import mmmu_pro_parser as parser
from mmbench_lib.tasks.mmmu_parser import parse_multi_choice
from mmbench_lib.tasks.modes import OFFICIAL, cot_modes, modes_of
from mmbench_lib.tasks.mmmu import (
    DISCIPLINES, SUBJECT_IDS, SUBJECT_TO_DISCIPLINE, SUBJECTS, _is_local, _parse_list, default_cache_dir,
    placeholder_order, write_image,
)

BENCHMARK = "mmmu-pro"
HUB_ID = "MMMU/MMMU_Pro"
NUM_IMAGE_COLUMNS = 7
#: the official ``evaluate.py`` expects exactly this many rows per output file (``NUM``)
NUM_ITEMS = 1730
#: setting key -> hub config name
SETTINGS = {"standard4": "standard (4 options)", "standard10": "standard (10 options)", "vision": "vision"}
SPLITS = tuple(f"{s}-{m}" for s in SETTINGS for m in parser.METHODS)
#: file-name spellings of the settings (``<model>_<setting>_<method>.jsonl``) -> setting key
_FILE_SETTINGS = {"standard(4 options)": "standard4", "standard (4 options)": "standard4", "standard(4opts)": "standard4",
                  "standard(10 options)": "standard10", "standard (10 options)": "standard10",
                  "standard(10opts)": "standard10", "standard": "standard10", "vision": "vision"}
_FILE_RE = re.compile(r"(?P<model>.+)_(?P<setting>standard ?\((?:4|10) ?opt(?:ion)?s\)|standard|vision)_(?P<method>cot|direct)\.jsonl$",
                      re.IGNORECASE)

DIMENSIONS: dict[int, tuple[str, str]] = {i: (s, SUBJECT_TO_DISCIPLINE[s]) for s, i in SUBJECT_IDS.items()}
GROUPS: dict[str, tuple[int, ...]] = {
    **{d: tuple(SUBJECT_IDS[s] for s in subs) for d, subs in DISCIPLINES.items()},
    "Overall": tuple(SUBJECT_IDS[s] for s in SUBJECTS),
}


def parse_split(split: str) -> tuple[str, str]:
    """``"standard10-cot"`` -> ``("standard10", "cot")``; a setting alone (or a hub config name) means direct."""
    s = str(split).strip()
    key, _, method = s.rpartition("-") if s.endswith(("-direct", "-cot")) else (s, "", "direct")
    key = _FILE_SETTINGS.get(key.lower(), key.lower())
    if key not in SETTINGS or method not in parser.METHODS:
        raise ValueError(f"unknown MMMU-Pro split {split!r}; use one of {list(SPLITS)}")
    return key, method


def parse_filename(name: str) -> tuple[str, str, str]:
    """``gpt-4o_standard(10 options)_direct.jsonl`` -> ``("gpt-4o", "standard10", "direct")``.

    QUIRK: the official ``check_files`` pattern only knows ``_standard_``/``_vision_``, so it skips the
    ``standard(10 options)`` files its own runners write; we read every spelling the runners use.
    """
    m = _FILE_RE.search(Path(name).name)
    if not m:
        raise ValueError(f"{name}: not an official MMMU-Pro output name <model>_<setting>_<method>.jsonl")
    setting = re.sub(r"\s+", " ", m["setting"].lower())
    key = _FILE_SETTINGS.get(setting, _FILE_SETTINGS.get(setting.replace(" (", "(")))
    if key is None:
        key = "standard4" if "4" in setting else "standard10"
    return m["model"], key, m["method"].lower()


# ---------------------------------------------------------------------------------------------- loading

def _read_local(folder: Path, config: str) -> tuple[str, list[dict]]:
    files = sorted((folder / config).rglob("*.parquet"))
    if not files:
        raise DataError(str(folder / config), f"no parquet file for config {config!r}")
    return str(folder / config), read_parquet(files)


def _read_hub(source: str, config: str) -> tuple[str, list[dict]]:
    import datasets

    try:
        ds = datasets.load_dataset(source, config, split="test")
    except (FileNotFoundError, ConnectionError) as e:
        raise DataError(f"{source}:{config}", f"not a local folder, and the hub dataset could not be loaded ({e})") from None
    for col in ["image", *(f"image_{k}" for k in range(1, NUM_IMAGE_COLUMNS + 1))]:
        if col in ds.column_names:
            ds = ds.cast_column(col, datasets.Image(decode=False))
    return f"{source}:{config}/test", ds.to_list()


def record_to_item(rec: dict, setting: str, method: str, path, image_dir: Path, data_root=None) -> Item:
    """One hub row -> ``Item``; DataError naming file, item and field."""
    qid = rec.get("id")
    if not isinstance(qid, str) or not qid:
        raise DataError(str(path), f"missing or non-string id {qid!r}", None, "id")
    subject = rec.get("subject")
    if subject not in SUBJECT_IDS:
        raise DataError(str(path), f"unknown subject {subject!r}", qid, "subject")
    options = _parse_list(rec.get("options"), path, qid, "options")
    if not 1 < len(options) <= 10:
        raise DataError(str(path), f"expected 2-10 options (A-J), got {len(options)}", qid, "options")
    letters = [chr(ord("A") + i) for i in range(len(options))]
    answer = rec.get("answer")
    if answer not in letters:
        raise DataError(str(path), f"answer {answer!r} is not one of the option letters {letters}", qid, "answer")
    meta = {"setting": setting, "method": method, "source_file": str(path),
            "options_raw": rec["options"] if isinstance(rec["options"], str) else str(list(options))}
    images, errors, question, tags = [], [], "", []
    if setting == "vision":
        meta["options_in_image"] = True  # the screenshot shows them: no option order to change (tasks.options)
        p, err = write_image(rec.get("image"), image_dir, f"{qid}_screenshot", data_root)
        images.append(p or "")
        if err:
            errors.append(f"image: {err}")
    else:
        question = rec.get("question")
        if not isinstance(question, str):
            raise DataError(str(path), f"expected a string, got {type(question).__name__}", qid, "question")
        # images in the order of their <image k> placeholders in question then (shuffled) options,
        # as infer_transformers.py: placeholder order is not column order (README "Important Note")
        order = placeholder_order(question, options)
        for k in order:
            if not 1 <= k <= NUM_IMAGE_COLUMNS or rec.get(f"image_{k}") is None:
                raise DataError(str(path), f"placeholder <image {k}> has no image (column image_{k} is empty)", qid,
                                "question" if f"<image {k}>" in question else "options")
            p, err = write_image(rec[f"image_{k}"], image_dir, f"{qid}_image_{k}", data_root)
            images.append(p or "")
            tags.append(f"<image {k}>")
            if err:
                errors.append(f"image_{k}: {err}")
        unreferenced = [f"image_{k}" for k in range(1, NUM_IMAGE_COLUMNS + 1)
                        if rec.get(f"image_{k}") is not None and k not in order]
        if unreferenced:
            meta["unreferenced_images"] = unreferenced  # the official runner does not feed them either
        meta["image_tags"] = tags
        meta["explanation"] = rec.get("explanation") or ""
    img_type = rec.get("img_type")
    item = Item(
        id=qid, benchmark=BENCHMARK, split=f"{setting}-{method}", question=question, choices=options, answer=answer,
        dimension_id=SUBJECT_IDS[subject], dimension=subject, group=SUBJECT_TO_DISCIPLINE[subject],
        difficulty=rec.get("topic_difficulty") or None,
        image_type=_parse_list(img_type, path, qid, "img_type") if img_type not in (None, "") else [],
        images=images, meta=meta,
    )
    if errors:
        item.meta["media_error"] = "; ".join(errors)
    return item


#: the columns of each setting's hub config (module docstring)
COLUMNS = {"standard4": ("id", "question", "options", "answer", "subject"),
           "standard10": ("id", "question", "options", "answer", "subject"),
           "vision": ("id", "image", "options", "answer", "subject")}


def probe(source, split: str | None = None) -> str:
    """A cheap look at ``source`` for one setting: ``per-config`` (a folder holding ``<config>/**/*.parquet``, the
    hub layout) or ``hub`` (a hub id: held in the local hub cache, its layout probed too); DataError otherwise."""
    setting, _method = parse_split(split or "standard10-direct")
    config = SETTINGS[setting]
    hub = not Path(str(source)).exists()
    folder = copy_tables.local_source(source)
    if folder is None:
        return "hub"  # a hub id the datasets library serves (preflight checks the cache)
    files = sorted((folder / config).rglob("*.parquet")) if folder.is_dir() else []
    if not files:
        found = sorted(p.name for p in folder.iterdir())[:8] if folder.is_dir() else "a file"
        raise DataError(str(folder), f"expected the MMMU-Pro hub layout, one folder per setting ('{config}/**/*.parquet' "
                                     f"for {setting}); found {found}")
    copy_tables.require_columns(files[0], copy_tables.parquet_columns(files[0]), COLUMNS[setting], f"the MMMU-Pro '{config}' parquet")
    return "hub" if hub else "per-config"


def load(source: str | os.PathLike = HUB_ID, split: str = "standard10-direct", subjects=None,
         cache_dir: str | os.PathLike | None = None) -> list[Item]:
    """Items of one setting (``split``: see the module docstring), in file order; ``subjects``
    restricts to subject names (default all). A hub id held in the local hub cache is read from there."""
    setting, method = parse_split(split)
    config = SETTINGS[setting]
    source = native_source(source)
    local = _is_local(source)
    path, rows = _read_local(Path(source), config) if local else _read_hub(str(source), config)
    wanted = None
    if subjects not in (None, "all"):
        names = [subjects] if isinstance(subjects, str) else list(subjects)
        unknown = [s for s in names if s not in SUBJECT_IDS]
        if unknown:
            raise ValueError(f"unknown MMMU-Pro subject(s) {unknown}; known: {SUBJECTS}")
        wanted = set(names)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir(str(source), BENCHMARK)
    items, seen = [], {}
    for i, rec in enumerate(rows):
        if wanted is not None and rec.get("subject") not in wanted:
            continue
        item = record_to_item(rec, setting, method, path, cache / setting, Path(source) / config if local else None)
        if item.id in seen:
            raise DataError(path, f"duplicate id (also row #{seen[item.id]})", item.id, "id")
        seen[item.id] = i
        items.append(item)
    return items


# --------------------------------------------------------------------------------------------- generation protocol

PROTOCOL = "generation"
DEFAULT_SPLIT = "standard10-direct"
OCR_LANG = "eng"
DEVIATIONS = [
    "fallback: a seeded random.Random draw, marked fallback=True (official: unseeded random.choice)",
    "a placeholder repeated in question or options feeds its image once (infer_transformers.py feeds it at each "
    "occurrence); placeholders stay '<image k>' in the text (official: '<image>' or '[image]')",
    "generation is greedy with our max_new_tokens (official runners: max_tokens 4096 for APIs, 50 new tokens in "
    "infer_transformers.py)",
]


def load_split(source, split: str, subjects=None, cache_dir=None) -> list[Item]:
    return load(source, split=split, subjects=subjects, cache_dir=cache_dir)


#: MMMU-Pro's prompt modes: ``official`` is the split's method (direct or CoT), ``cot`` the published CoT
#: prompt (prompts.yaml; a ``-cot`` split), ``cot+answer-line`` its labelled last-Answer-line reading
PROMPT_MODES = modes_of(OFFICIAL, *cot_modes("MMMU-Pro §3, mmmu-pro/prompts.yaml (cot): the published CoT prompt",
                                             official=True))


def generation_prompt(item: Item, style: str = "official") -> str:
    """Standard: question, ``A. opt`` lines, instruction; vision: the instruction only (prompts.yaml).
    ``style="cot"``: the CoT instruction whatever the item's split (runs resolve the split to ``-cot``)."""
    method = "cot" if style == "cot" else item.meta.get("method", "direct")
    if item.meta.get("setting") == "vision":
        return parser.vision_prompt(method)
    return parser.standard_prompt(item.question, item.choices, method)


def image_placeholders(item: Item) -> list[tuple[int, str, str]]:
    out = []
    for tag, path in zip(item.meta.get("image_tags") or [], item.images):
        out.append((int(tag[len("<image "):-1]), tag, path))
    return out


def answer_kind(item: Item) -> str:
    return "multiple-choice"


def baseline_choices(item: Item) -> list[str]:
    return item.letters


def baseline_answer(item: Item, value: str) -> str:
    return value if value in item.letters else ""


def output_row(item: Item, response) -> dict:
    """One line of an official output file: the dataset row without images, plus ``response``."""
    # options moved by CircularEval (meta option_order, tasks.options) are written as shown, so the parser's
    # letters and option texts match the prompt; unmoved, the dataset's own string is kept
    moved = item.meta.get("option_order") not in (None, list(range(len(item.choices))))
    row = {"id": item.id, "options": str(list(item.choices)) if moved else item.meta.get("options_raw", str(list(item.choices))),
           "answer": item.answer, "subject": item.dimension}
    if item.meta.get("setting") != "vision":
        row.update(question=item.question, explanation=item.meta.get("explanation", ""),
                   img_type=str(list(item.image_type)), topic_difficulty=item.difficulty)
    row["response"] = response
    return row


def write_official(items: list[Item], stored: dict, root: Path, model: str | None = None):
    """``root/<model>_<setting>_<method>.jsonl`` of the ok rows (the runners' layout; ``model``: by default
    the run folder's name, the parent of ``root``); returns ``(path,)`` for ``score_responses``, or
    ``None`` when nothing is stored."""
    ok = [(it, stored[it.id]) for it in items if stored.get(it.id, {}).get("status") == "ok"]
    if not ok:
        return None
    setting, method = ok[0][0].meta["setting"], ok[0][0].meta["method"]
    name = {"standard4": "standard(4 options)", "standard10": "standard(10 options)", "vision": "vision"}[setting]
    root = Path(root)
    model = model or re.sub(r"[^\w.+-]+", "-", root.resolve().parent.name) or "run"
    root.mkdir(parents=True, exist_ok=True)
    for old in root.glob("*.jsonl"):
        old.unlink()
    path = root / f"{model}_{name}_{method}.jsonl"
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for it, r in ok:
            f.write(json.dumps(output_row(it, r.get("response")), ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    return (path,)


def write_submission(items, stored, rows, out: Path) -> Path:
    """MMMU-Pro answers are public; the parsed letters as ``{id: letter}`` for reference."""
    path = Path(out) / "predictions_by_id.json"
    write_json_atomic(path, {r["id"]: r.get("parsed_pred") for r in rows if r.get("status") == "ok"})
    return path


# --------------------------------------------------------------------------------------------- rescoring

def read_output(path, counts: dict | None = None) -> list[dict]:
    """The rows of an official output file (JSON lines); DataError naming file, line and field.

    Blank lines are skipped and counted in ``counts["blank_lines"]`` (``evaluate.py`` would stop on
    them; they change no score)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(str(path), "responses file not found")
    rows = []
    for n, rec in read_rows(path, counts=counts if counts is not None else {}):  # core.jsonl: bounded, blanks counted
        for key in ("id", "options", "answer"):
            if key not in rec:
                raise DataError(f"{path}:{n}", "field missing", rec.get("id"), key)
        rows.append(rec)
    return rows


def _subject(rec: dict) -> str:
    s = rec.get("subject")
    if s in SUBJECT_IDS:
        return s
    m = re.fullmatch(r"[a-z]+_(.+?)_\d+", str(rec.get("id")))  # evaluate.py: extract_subset_name
    return m.group(1) if m and m.group(1) in SUBJECT_IDS else "(unknown)"


#: ``variant`` of :func:`score_records` -> answer extractor: the official one, and MMMU's (NOT official for
#: MMMU-Pro: no ``Answer:`` rule, space-guarded letters, no ``L.`` pass; what a suite reusing its MMMU scorer gets)
VARIANTS = ("official", "mmmu-parser")


def _extract(variant: str):
    if variant not in VARIANTS:
        raise ValueError(f"unknown MMMU-Pro parser variant {variant!r}; use one of {list(VARIANTS)}")
    if variant == "official":
        return parser.parse_answer
    return lambda response, letters, index2ans, rng: parse_multi_choice(
        response if isinstance(response, str) else "", letters, index2ans, rng)


def score_records(records: list[dict], rng: random.Random | None, source: str = "", variant: str = "official") -> list[dict]:
    """Per-item rows (``mmmu_process_results``): ``parsed_pred``, ``correct``, ``fallback``, ``mode``.
    ``rng`` is consumed in file order by the fallbacks (None: no fallback, scored wrong); ``variant``: a
    key of :data:`VARIANTS`."""
    extract = _extract(variant)
    out = []
    for n, rec in enumerate(records, start=1):
        try:
            index2ans, letters = parser.mc_info(str(rec["options"]) if not isinstance(rec["options"], list) else rec["options"])
        except (ValueError, SyntaxError) as e:
            raise DataError(f"{source}:{n}" if source else f"row {n}", f"options not a Python list ({e})", rec.get("id"), "options") from None
        response = rec.get("response")
        p = extract(response, letters, index2ans, rng)
        subject = _subject(rec)
        out.append({"id": rec["id"], "subject": subject, "discipline": SUBJECT_TO_DISCIPLINE.get(subject, "(unknown)"),
                    "parsed_pred": p.pred, "answer": rec["answer"], "correct": parser.is_correct(p.pred, rec["answer"]),
                    "fallback": p.fallback, "mode": p.mode, "n_options": len(letters),
                    "response_empty": not (response.strip() if isinstance(response, str) else ""),
                    **({"response_error": "API error object saved as response; scored as empty"} if isinstance(response, dict) else {})})
    return out


def tables(rows: list[dict]) -> dict:
    """``overall``, ``per_subject``, ``per_discipline`` (question-weighted, ``core.metrics`` entries) and
    ``official``: the ``mmmu_aggregate_results`` layout (``Overall-<Discipline>``, subjects, ``Overall``;
    acc rounded to 3 places)."""
    per_subject: dict = OrderedDict()
    for s in SUBJECTS:
        rs = [r for r in rows if r["subject"] == s]
        if rs:
            per_subject[s] = entry(sum(r["correct"] for r in rs), len(rs))
    per_discipline, official = OrderedDict(), OrderedDict()
    for d, subs in DISCIPLINES.items():
        present = [s for s in subs if s in per_subject]
        if not present:
            continue
        c = sum(per_subject[s]["correct"] for s in present)
        n = sum(per_subject[s]["n"] for s in present)
        per_discipline[d] = {**entry(c, n), "subjects": len(present)}
        official[f"Overall-{d}"] = {"num": n, "acc": round(c / n, 3)}
        for s in present:
            official[s] = {"num": per_subject[s]["n"], "acc": round(per_subject[s]["accuracy"], 3)}
    overall = entry(sum(r["correct"] for r in rows), len(rows))
    official["Overall"] = {"num": overall["n"], "acc": round(overall["accuracy"], 3) if overall["n"] else 0}
    return {"overall": overall, "per_subject": dict(per_subject), "per_discipline": dict(per_discipline),
            "official": dict(official)}


def seed_spread(records: list[dict], seeds=range(100), variant: str = "official") -> dict:
    """Accuracy under each fallback seed (only fallback items change): mean, sd (ddof 1), min, max."""
    import statistics

    accs = [sum(r["correct"] for r in score_records(records, random.Random(s), variant=variant)) / len(records)
            for s in seeds] if records else []
    if not accs:
        return {"seeds": 0}
    return {"seeds": len(accs), "mean": statistics.fmean(accs), "sd": statistics.stdev(accs) if len(accs) > 1 else 0.0,
            "min": min(accs), "max": max(accs)}


def score_responses(responses, answers=None, questions=None, use_random: bool = True, seed=42,
                    seeds=range(100), variant: str = "official") -> tuple[list[dict], dict]:
    """Rescore one official output file ``<model>_<setting>_<method>.jsonl`` (``evaluate.py``).

    ``answers``/``questions`` are unused (the file carries options and answer). Returns ``(rows,
    summary)`` as ``pipeline.rescoring`` does for MMMU: rows with ``parsed_pred``, ``correct``,
    ``fallback``, ``mode``; the summary with the official accuracy, per-subject and per-discipline
    tables, counts, and the spread of the accuracy over ``seeds`` fallback seeds. ``variant``: the answer
    extractor (:data:`VARIANTS`; anything but ``official`` is NOT the official scorer).
    """
    path = Path(responses)
    read_counts: dict = {"blank_lines": 0}
    records = read_output(path, read_counts)
    try:
        model, setting, method = parse_filename(path.name)
    except ValueError:
        model, setting, method = path.stem, None, None
    rng = (seed if isinstance(seed, random.Random) else random.Random(seed)) if use_random else None
    rows = score_records(records, rng, str(path), variant)
    ids = [r["id"] for r in rows]
    warn = []
    if len(rows) != NUM_ITEMS:
        warn.append(f"{len(rows)} rows; the official evaluate.py expects {NUM_ITEMS} and skips such a file")
    if len(set(ids)) != len(ids):
        warn.append(f"{len(ids) - len(set(ids))} duplicate ids (each counted, as evaluate.py does)")
    summary = {
        "benchmark": BENCHMARK, "input": str(path), "model": model, "setting": setting, "method": method,
        "parser": "official (mmmu-pro/evaluate.py)" if variant == "official" else f"NOT official: {variant}",
        "random_fallback": f"random.Random({seed if not isinstance(seed, random.Random) else 'given'})" if use_random
        else "none (scored wrong)",
        **tables(rows),
        "counts": {"items": len(rows), "fallbacks": sum(r["fallback"] for r in rows),
                   "empty_responses": sum(r["response_empty"] for r in rows), **read_counts,
                   "modes": dict(sorted({m: sum(r["mode"] == m for r in rows) for m in {r["mode"] for r in rows}}.items()))},
        "fallback_seed_spread": seed_spread(records, seeds, variant) if use_random else None,
        "warnings": warn,
    }
    return rows, summary


def accuracy_by_setting(files) -> list[dict]:
    """One row per official output file: model, setting, method, accuracy (%), n, fallbacks and the
    seed spread's sd (%); what the per-setting figure plots."""
    out = []
    for f in files:
        _rows, s = score_responses(f)
        spread = s["fallback_seed_spread"] or {}
        out.append({"model": s["model"], "setting": s["setting"], "method": s["method"],
                    "accuracy": 100 * s["overall"]["accuracy"], "n": s["overall"]["n"],
                    "fallbacks": s["counts"]["fallbacks"], "seed_sd": 100 * spread.get("sd", 0.0)})
    return out


# --------------------------------------------------------------------------------------------- the task
import sys  # noqa: E402

from mmbench_lib.tasks.base import AuditPart, GenerationTask, Layout, register_task  # noqa: E402
from mmbench_lib.tasks.recipes import Protocol  # noqa: E402

SPLIT_ALIASES = {**{k: f"{k}-direct" for k in SETTINGS}, **{v: f"{k}-direct" for k, v in SETTINGS.items()}}


class MMMUProTask(GenerationTask):
    """MMMU-Pro: MMMU's 30 subjects, 4 or 10 options or one screenshot, direct or CoT prompts."""
    audit = AuditPart("mmbench_lib.tasks.mmmu_pro_audit")  # mmbench audit (docs/audit.md)

    name = BENCHMARK
    aliases = ("mmmu_pro",)
    title = "MMMU-Pro"
    published_tables = ("mmmu_pro_leaderboard",)
    splits = SPLITS
    split_sizes = {s: NUM_ITEMS for s in SPLITS}  # every setting holds the same 1,730 questions (evaluate.py NUM)
    split_aliases = SPLIT_ALIASES
    default_split = DEFAULT_SPLIT
    # one hub split (test); the settings are the same 1,730 questions: no split to learn answers from
    validation_split = None
    dimensions = DIMENSIONS
    groups = GROUPS
    group_kind = "subject"
    hub_id = HUB_ID
    layouts = (
        Layout("per-config", "the hub layout (MMMU/MMMU_Pro), one folder per setting: 'standard (10 options)/', "
                             "'standard (4 options)/', 'vision/', each holding <split>-*.parquet (or test/0000.parquet)"),
        Layout("hub", "the hub id MMMU/MMMU_Pro held in the local hub cache"),
    )
    ocr_lang = OCR_LANG
    official_output = "jsonl-per-setting"  # <model>_<setting>_<method>.jsonl (mmmu-pro/output/)
    official_output_help = ("an official output file <model>_<setting>_<method>.jsonl (mmmu-pro/output/)",
                            "not needed (each line carries options and answer)")
    deviations = DEVIATIONS

    def table_column(self, table: str, split: str | None) -> str | None:
        """The leaderboard's column per setting (``standard_10``, ``vision``; ``standard_4``, which the leaderboard
        does not print, for our standard4 runs): a run fills the column of the setting it ran."""
        if table != "mmmu_pro_leaderboard":
            return None
        return {"standard10": "standard_10", "standard4": "standard_4", "vision": "vision"}[parse_split(split or DEFAULT_SPLIT)[0]]
    module = sys.modules[__name__]
    parser = parser
    #: the protocol report's readings of one run's responses (reports/protocol.py, notebook 50)
    parser_variants = {p.key: p for p in (
        Protocol("official", "official", "paper: MMMU-Pro evaluate.py rules (Answer: line first), seeded random fallback"),
        Protocol("mmmu-parser", "MMMU parser", "NOT official: MMMU's parse_multi_choice_response (no Answer: rule, "
                 "space-guarded letters, no 'L.' pass), as a suite reusing its MMMU scorer reads MMMU-Pro",
                 rescore={"variant": "mmmu-parser"}),
        Protocol("no-fallback", "no fallback", "NOT official: official rules, an unparseable answer scored wrong",
                 rescore={"use_random": False}),
    )}
    prompt_modes = PROMPT_MODES

    def resolve_mode(self, split, mode):
        """A split names its prompt method: a CoT mode runs the setting's ``-cot`` split, and a ``-cot`` split
        is the ``cot`` mode (its published CoT prompt), so split and label always agree."""
        m = self.prompt_mode(mode)
        setting, method = parse_split(split or DEFAULT_SPLIT)
        if m.prompt == "cot":
            return f"{setting}-cot", m.key
        return split, ("cot" if method == "cot" else m.key)

    def resolve_subject(self, name: str) -> str:
        if name not in SUBJECT_IDS:
            raise ValueError(name)
        return name

    def selection_names(self) -> list[str]:
        return list(SUBJECTS)

    def probe(self, location, split=None, args: dict | None = None) -> str:
        return probe(location, split)

    def fallback_wins(self, row: dict, options: tuple) -> tuple:
        """The fallback draws ``is_correct`` counts right: the gold letter alone."""
        return tuple(o for o in options if parser.is_correct(o, row["answer"]))

    def score_official(self, responses, answers=None, questions=None, **kw):
        """Rescore one official output file (the module's ``score_responses``)."""
        return score_responses(responses, answers, questions, **kw)


register_task(MMMUProTask)
