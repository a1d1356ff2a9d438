"""MMBench (task ``mmb``): lettered multiple choice over 20 abilities, scored by CircularEval.

Paper: Liu et al., "MMBench: Is Your Multi-modal Model an All-around Player?", ECCV 2024 (arXiv 2307.06281).
Data: the dev splits (EN / CN, V1.0 / V1.1) as VLMEvalKit's TSVs (``MMBench_DEV_EN.tsv`` and siblings;
docs/en/Development.md, Table 1, open-compass/VLMEvalKit@e8e78f05) or the hub parquet (``lmms-lab/MMBench``).
The files hold each question once per cyclic shift of its options (copies at ``index + k * 1e6``, grouped by
``index % 1e6`` as VLMEvalKit's ``mcq_circular_eval`` does); the loader reads the main rows and counts the
copies, and the suite asks every shift itself (``selection.rotation``), so CircularEval comes from notebook
52's one machinery (``reports.circular``, ``reports.circular_official``). Generated answers: recipe
``mmbench-gen`` read by VLMEvalKit's ``can_infer``; ranking: ``mmbench-letters``. Test answers are not public:
a file without answers loads withheld (``answer`` None) and a run writes the server's file (:func:`write_submission`).

More: docs/modules.md, ``mmbench_lib/tasks/mmbench.py``; docs/mmbench.md.
"""
from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path

from mmbench_lib.core.items import DataError, Item
from mmbench_lib.tasks._common import strict_int
from mmbench_lib.tasks.base import AuditPart, Layout, PublishedColumn, Task, did_you_mean, register_task
from mmbench_lib.tasks.copies import tables
from mmbench_lib.tasks.copies.tables import image_bytes, read_parquet, read_tsv
from mmbench_lib.tasks.mmmu import write_image
from mmbench_lib.tasks.recipes import RANKING_PROTOCOLS, Protocol

BENCHMARK = "mmb"
HUB_ID = "lmms-lab/MMBench"
#: the circular copies' index offset (VLMEvalKit ``mcq_circular_eval``: ``g_index = index % 1e6``)
OFFSET = 1_000_000
OPTION_LETTERS = "ABCD"

#: L2 category (as the files spell it) -> (its abbreviation in VLMEvalKit's tables, the leaf categories).
#: MMBench §3 (ability taxonomy: L-1 Perception / Reasoning, six L-2, twenty L-3); abbreviations from
#: vlmeval/dataset/utils/multiple_choice.py lines 17-24 at VLMEvalKit@e8e78f05
TAXONOMY: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "coarse_perception": ("CP", "Perception", ("image_style", "image_scene", "image_emotion", "image_quality",
                                               "image_topic")),
    "finegrained_perception (instance-level)": ("FP-S", "Perception", ("object_localization", "attribute_recognition",
                                                                        "celebrity_recognition", "ocr")),
    "finegrained_perception (cross-instance)": ("FP-C", "Perception", ("spatial_relationship", "attribute_comparison",
                                                                        "action_recognition")),
    "attribute_reasoning": ("AR", "Reasoning", ("physical_property_reasoning", "function_reasoning",
                                                "identity_reasoning")),
    "relation_reasoning": ("RR", "Reasoning", ("social_relation", "physical_relation", "nature_relation")),
    "logic_reasoning": ("LR", "Reasoning", ("structuralized_imagetext_understanding", "future_prediction")),
}
#: id -> (leaf category, its L2 category); the leaf categories are the dimensions
DIMENSIONS: dict[int, tuple[str, str]] = {
    i: (leaf, l2) for i, (leaf, l2) in enumerate(((leaf, l2) for l2, (_a, _l1, leaves) in TAXONOMY.items()
                                                  for leaf in leaves), 1)}
CATEGORY_IDS = {leaf: i for i, (leaf, _l2) in DIMENSIONS.items()}
#: VLMEvalKit ``report_acc``: Overall, then one column per L2 category (question-weighted means); L1 beside them
GROUPS: dict[str, tuple[int, ...]] = {
    **{abbr: tuple(CATEGORY_IDS[x] for x in leaves) for _l2, (abbr, _l1, leaves) in TAXONOMY.items()},
    **{l1: tuple(CATEGORY_IDS[x] for _l2, (_a, one, leaves) in TAXONOMY.items() if one == l1 for x in leaves)
       for l1 in ("Perception", "Reasoning")},
    "Overall": tuple(DIMENSIONS),
}
NEEDED = ("index", "question", "A", "B", "category", "image")
EDITION = re.compile(r"MMBench(?:_(DEV|TEST))?(?:_(EN|CN))?(?:_(V11))?", re.I)


def _text(value) -> str | None:
    """A cell as text; empty, NaN and missing are ``None`` (VLMEvalKit's ``pd.isna``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    s = str(value)
    return None if s.strip() == "" or s.strip().lower() == "nan" else s


def _col(name: str) -> str:
    """A column name as VLMEvalKit reads it: lower-cased except the option letters (``L2-category`` too)."""
    return name if len(name) == 1 and name.isupper() else name.lower()


def _norm_keys(row: dict) -> dict:
    return {_col(k): v for k, v in row.items()}


def _files(path: Path, split: str, language: str) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(path.glob(f"{language}/{split}-*.parquet")) or sorted(path.glob(f"**/{split}-*.parquet")) \
        or sorted(path.glob("*.parquet"))
    if not files:
        found = sorted(str(x.relative_to(path)) for x in path.rglob("*.parquet"))[:8]
        raise DataError(str(path), f"expected {language}/{split}-*.parquet (the hub copy {HUB_ID}) or an MMBench TSV; "
                                   f"found {found or 'no parquet file'}")
    return files


def _rows(path: Path, split: str, language: str, limit: int | None = None) -> list[dict]:
    if path.is_file() and tables.sniff(path) == "tsv":
        return [_norm_keys(r) for r in read_tsv(path, limit)]
    if path.is_file() and tables.sniff(path) != "parquet":
        raise DataError(str(path), "expected an MMBench TSV (VLMEvalKit) or a parquet copy; found a file that is neither")
    return [_norm_keys(r) for r in read_parquet(_files(path, split, language), limit)]


def probe(annotation_file, split: str | None = None) -> str:
    """``tsv`` (VLMEvalKit's file) or ``parquet`` (the hub copy: a file or a folder), after reading the
    columns and first rows; DataError naming the file, what was expected and what was found."""
    path = Path(annotation_file)
    if not path.exists():
        raise DataError(str(path), "annotation file not found")
    if path.is_dir():
        f = _files(path, split or "dev", "en")[0]
        tables.require_columns(f, [_col(c) for c in tables.parquet_columns(f)], NEEDED,
                               "the MMBench hub parquet")
        return "parquet"
    kind = tables.sniff(path)
    if kind == "parquet":
        tables.require_columns(path, [_col(c) for c in tables.parquet_columns(path)], NEEDED,
                               "the MMBench hub parquet")
        return "parquet"
    if kind != "tsv":
        raise DataError(str(path), "expected an MMBench TSV (VLMEvalKit's MMBench_DEV_EN.tsv and siblings) or a parquet "
                                   "copy; found a file that is neither")
    rows = _rows(path, "dev", "en", limit=2)
    tables.require_columns(path, list(rows[0]) if rows else [], NEEDED, "an MMBench TSV (VLMEvalKit)")
    return "tsv"


def _choices(row: dict, path, qid) -> list[str]:
    """The options A-D that are given (VLMEvalKit ``build_choices`` keeps the non-NaN letters); a gap is an error."""
    texts = [_text(row.get(L)) for L in OPTION_LETTERS]
    n = sum(t is not None for t in texts)
    if n < 2:
        raise DataError(str(path), f"expected at least two options, found {n}", qid, "A")
    if any(t is None for t in texts[:n]):
        gap = OPTION_LETTERS[texts.index(None)]
        raise DataError(str(path), f"option {gap} is empty but a later option is given", qid, gap)
    return [t for t in texts[:n]]


def _image(row: dict, path, qid, cache: Path) -> tuple[str, str | None]:
    """The row's image written once under ``cache`` (``(path, None)``), or ``("", why)`` for bytes that do not
    decode: a media error marks that item only, as for every task."""
    cell = row.get("image")
    if isinstance(cell, list):  # a TSV cell, resolved by read_tsv (one base64 string, or a list)
        if len(cell) != 1:
            raise DataError(str(path), f"expected one image, found {len(cell)}", qid, "image")
        cell = cell[0]
    if cell is None:
        raise DataError(str(path), "no image", qid, "image")
    target, error = write_image(image_bytes(cell, path, qid, "image"), cache, f"mmb_{qid}")
    return target or "", error


def edition(path: Path) -> str:
    """What the file is (``MMBench_DEV_EN_V11``), from its name: VLMEvalKit's dataset names; else the name itself."""
    m = EDITION.search(path.name if path.is_file() else str(path))
    return m.group(0) if m else path.stem


def load(annotation_file: str | os.PathLike, split: str = "dev", language: str = "en",
         dimensions: list[int] | str | None = None, cache_dir: str | os.PathLike | None = None) -> list[Item]:
    """The questions of an MMBench TSV or parquet copy (module doc): the main row of each circular group,
    ``meta["copies"]`` its number of rows. ``split`` / ``language`` choose the parquet files of a hub folder
    (``<language>/<split>-*.parquet``); ``dimensions``: category ids (1-20) or ``"all"``; images are written once
    under ``cache_dir``."""
    path = Path(annotation_file)
    if not path.exists():
        raise DataError(str(path), "annotation file not found")
    rows = _rows(path, split, language)
    keep = None if dimensions in ("all", None) else {int(d) for d in ([dimensions] if isinstance(dimensions, (int, str)) else dimensions)}
    cache = Path(cache_dir) if cache_dir is not None else tables.default_cache_dir(str(path), BENCHMARK)
    groups: dict[int, int] = {}
    members: dict[int, list[dict]] = {}
    withheld = bool(rows) and all(_text(r.get("answer")) is None for r in rows)  # a test file: no answer anywhere
    mains = []
    for i, row in enumerate(rows):
        qid = str(row.get("index", f"#{i}"))
        if "index" not in row or _text(row.get("index")) is None:
            raise DataError(str(path), "field missing", f"row {i}", "index")
        index = strict_int(row["index"], path, qid, "index")
        g = strict_int(row["g_index"], path, qid, "g_index") if _text(row.get("g_index")) is not None else index % OFFSET
        groups[g] = groups.get(g, 0) + 1
        if withheld:  # the file's rows, for the submission file (write_submission)
            members.setdefault(g, []).append({**{k: (None if _text(v) is None else v) for k, v in row.items() if k != "image"},
                                              "index": index})
        if index == g:
            mains.append(row)
    where = edition(path) if path.is_file() else f"{path.name}:{language}/{split}"
    items, seen = [], set()
    for row in mains:
        qid = str(row["index"]).strip()
        if qid in seen:
            raise DataError(str(path), "duplicate index", qid, "index")
        seen.add(qid)
        items.append(_item(row, qid, path, split, cache, groups.get(int(qid), 1), where,
                           members.get(int(qid), []) if withheld else None))
    if not items and rows:
        raise DataError(str(path), f"no question row (index below {OFFSET:,}, or equal to its g_index) among {len(rows)} rows")
    return [it for it in items if keep is None or it.dimension_id in keep]


def _item(row: dict, qid: str, path: Path, split: str, cache: Path, copies: int, where: str,
          copy_rows: list[dict] | None = None) -> Item:
    """One question; ``copy_rows`` (the group's rows, a file without answers only): its answer is withheld."""
    for field in ("question", "category"):
        if _text(row.get(field)) is None:
            raise DataError(str(path), "field missing or empty", qid, field)
    category = str(row["category"]).strip()
    if category not in CATEGORY_IDS:
        raise DataError(str(path), f"unknown category {category!r}{did_you_mean(category, CATEGORY_IDS)}; MMBench has "
                                   f"{len(CATEGORY_IDS)} (mmbench list benchmarks)", qid, "category")
    dim = CATEGORY_IDS[category]
    choices = _choices(row, path, qid)
    answer = _text(row.get("answer"))
    row_split = _text(row.get("split")) or split
    if answer is None and copy_rows is None:
        raise DataError(str(path), "no answer, but other rows of the file have one (a test file has none: its answers "
                                   "are withheld)", qid, "answer")
    answer = None if answer is None else answer.strip()
    if answer is not None and answer not in OPTION_LETTERS[:len(choices)]:
        raise DataError(str(path), f"answer must be one of {list(OPTION_LETTERS[:len(choices)])}, got {answer!r}", qid, "answer")
    image, error = _image(row, path, qid, cache)
    l2 = DIMENSIONS[dim][1]
    item = Item(id=qid, benchmark=BENCHMARK, split=row_split, question=str(row["question"]), choices=choices,
                answer=answer, dimension_id=dim, dimension=category, group=TAXONOMY[l2][0], images=[image],
                meta={"hint": _text(row.get("hint")), "l2_category": l2, "l1": TAXONOMY[l2][1], "copies": copies,
                      "source": _text(row.get("source")), "edition": where})
    if copy_rows is not None:  # withheld: scored on the MMBench server from the submission file
        item.meta["copy_rows"] = copy_rows
    if error:
        item.meta["media_error"] = f"image: {error}"
    return item


#: VLMEvalKit's prediction file: ``{model}_{dataset}.xlsx`` (``get_pred_file_path``, vlmeval/smp/file.py)
SUBMISSION_SUFFIX = ".xlsx"


def submission_rows(items: list[Item], rows: list[dict]) -> list[dict]:
    """The file's rows of the withheld questions in ``items`` (each copy row once, file order) with a ``prediction``:
    the answer a stored row gave to the options in that copy's order (the generated response, as VLMEvalKit's
    ``infer_data_job`` stores it, else the ranked letter); empty where no run showed that order. The rows of
    several order runs (``rot-0`` ... of notebook 52) fill every copy; the first run's answer wins."""
    by_id: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("status") == "ok":
            by_id.setdefault(str(r["id"]), []).append(r)
    out = []
    for it in items:
        copies = it.meta.get("copy_rows")
        if copies is None:
            raise ValueError(f"item {it.id} has an answer: only a file without answers (a test split) has a submission file")
        preds: dict[int, str] = {}
        for r in by_id.get(it.id, []):
            order = r.get("option_order") or list(range(len(it.choices)))
            shown = [it.choices[o] for o in order]
            for c in copies:
                texts = [_text(c.get(L)) for L in OPTION_LETTERS[:len(shown)]]
                if texts == [_text(x) for x in shown] and int(c["index"]) not in preds:
                    answer = r.get("response") if r.get("response") is not None else r.get("prediction")
                    preds[int(c["index"])] = "" if answer is None else str(answer)
                    break
        out += [{**c, "prediction": preds.get(int(c["index"]), "")} for c in copies]
    return out


def write_submission(items: list[Item], rows: list[dict], out, name: str = "mmb") -> Path:
    """``out/<name>_<edition>.xlsx``: VLMEvalKit's prediction file of a test split, the one the MMBench server
    scores (``infer_data_job`` in vlmeval/inference.py at open-compass/VLMEvalKit@e8e78f05: the TSV's rows without
    ``image``, a ``prediction`` column added; ``.xlsx`` is its default ``PRED_FORMAT``). :func:`submission_rows`."""
    import pandas as pd

    table = submission_rows(items, rows)
    editions = sorted({str(it.meta.get("edition")) for it in items}) or ["MMBench"]
    path = Path(out) / f"{name}_{'+'.join(editions).replace('/', '_').replace(':', '_')}{SUBMISSION_SUFFIX}"
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = list(dict.fromkeys(k for r in table for k in r if k != "prediction")) + ["prediction"]
    pd.DataFrame(table, columns=columns).to_excel(path, index=False, engine="openpyxl")
    return path


class MMBenchTask(Task):
    """MMBench dev (EN / CN, V1.0 / V1.1): options ranked or generated letters read by VLMEvalKit's rule;
    CircularEval over every cyclic shift (notebook 52)."""

    name = BENCHMARK
    title = "MMBench"
    paper = ""
    order = 60
    protocol = "ranking"
    splits = ("dev", "test")  # test: answers withheld, a submission file instead of accuracy
    default_split = "dev"
    validation_split = None
    dimensions = DIMENSIONS
    groups = GROUPS
    group_kind = "category"
    audit = AuditPart("mmbench_lib.tasks.mmbench_audit")  # mmbench audit (docs/audit.md, MMBench section)
    hub_id = HUB_ID
    module = sys.modules[__name__]
    #: MMStar (arXiv 2403.20330) Tables 1-2: LLMs and LVLMs without images on MMBench-EN-Dev
    blind_reference = PublishedColumn(("mmstar_table1", "mmstar_table2"), "mmb_en_dev", "MMBench-EN-Dev",
                                      data=(("split", "dev"), ("language", "en")))
    #: notebook 50's protocols: the official one is the generated answer (``mmbench-gen``, one option order here;
    #: CircularEval is notebook 52); MMBench has no ranking protocol, so every ranked reading is marked not official
    ranking_protocols = {p.key: p for p in (
        Protocol("official", "generated, official", "official: MMBench (VLMEvalKit) prompt with the hint, generated "
                 "answer, can_infer exact matching, no ChatGPT judge, one option order", "mmbench-gen", "vlmevalkit"),
        Protocol("letters", "letters ranked", "NOT official: MMBench has no ranking protocol; the official prompt "
                 "ending 'Answer:', letters ranked by mean NLL", "mmbench-letters", "mean"),
        Protocol("content-sum", "content, sum", "NOT official: SEED v1's recipe (no hint, no options), summed NLL of "
                 "the option text", "seed1-ppl", "sum"),
        Protocol("content-mean", "content, mean", "NOT official: SEED v1's recipe (no hint, no options), mean NLL of "
                 "the option text", "seed1-ppl", "mean"),
        Protocol("gen-lmms-eval", "generated, lmms-eval", RANKING_PROTOCOLS["gen-lmms-eval"].kind.replace(
            "NOT a paper protocol", "NOT official") + " (no hint)", "lmms-eval-gen", "lmms-eval"),
    )}
    default_ranking_protocols = ("official", "letters", "content-sum", "content-mean", "gen-lmms-eval")
    demo_keys: tuple[str, ...] = ("annotation_file",)
    demo_filters: tuple[str, ...] = ("dimensions",)
    named_selections: tuple[str, ...] = ()
    path_parameters = ("annotation_file",)
    layouts = (
        Layout("tsv", "VLMEvalKit's MMBench_DEV_EN.tsv / _CN / _EN_V11 / _CN_V11: index, question, hint, A-D, answer, "
                      "category, l2-category, base64 image (or another row's index); circular copies at index + k*1e6"),
        Layout("parquet", "the hub copy (lmms-lab/MMBench): a .parquet file, or the folder with <config>/<split>-*.parquet "
                          "(configs en / cn; language and split choose the files)"),
    )

    def probe(self, location, split=None, args: dict | None = None) -> str:
        return probe(location, split)

    def write_submission(self, items, stored, rows, out):
        """The MMBench server's file of a withheld (test) split (:func:`write_submission`)."""
        return write_submission(items, rows, out)

    def check_selection(self, name: str, value) -> None:
        """``dimensions``: ``all`` or category ids 1-20."""
        if name != "dimensions" or value in ("all", None, [], ()):
            return
        if isinstance(value, str):
            raise ValueError(f"use 'all' or a list of category ids 1-{len(DIMENSIONS)}")
        for d in [value] if isinstance(value, int) else value if isinstance(value, list) else []:
            if isinstance(d, bool) or not isinstance(d, int) or d not in DIMENSIONS:
                raise ValueError(f"{d!r} is not an MMBench category id (1-{len(DIMENSIONS)})")


register_task(MMBenchTask)
