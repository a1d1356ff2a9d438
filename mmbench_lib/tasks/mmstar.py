"""MMStar (``Lin-Chen/MMStar``, val): 1,500 vision-indispensable multiple-choice questions.

Paper: Chen et al., NeurIPS 2024, arXiv 2403.20330. Six core capabilities x 250 items (§4.2, A.3), each split
into three axes (Figure 3): the file's ``category`` and ``l2_category``. The 18 axes are the dimensions, the six
capabilities their groups (question-weighted, as the official script divides each capability's hits by 250).

Options are written inline in the question (``Options: A: x, B: y, ...`` or MathVista's ``(A) x`` lines) and
parsed out (:func:`split_options`); trailing ``nan`` options are dropped. Protocols: ranking of the parsed
options (SEED's recipes), and generation scored by the official rule (recipe ``mmstar-gen``,
``tasks.letters.mmstar_letter``: ``eval/vlmeval/evaluate/mmstar.py`` of MMStar-Benchmark/MMStar at 88f243a).

More: docs/mmstar.md, docs/modules.md.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from mmbench_lib.core.items import DataError, Item
from mmbench_lib.tasks._common import check_unique, require
from mmbench_lib.tasks.base import AuditPart, Layout, register_task
from mmbench_lib.tasks.copies import tables
from mmbench_lib.tasks.copies.tables import read_parquet
from mmbench_lib.tasks.letters import mmstar_letter
from mmbench_lib.tasks.mmmu import default_cache_dir, write_image
from mmbench_lib.tasks.recipes import RANKING_PROTOCOLS, Protocol
from mmbench_lib.tasks.seed1 import SeedTask

BENCHMARK = "mmstar"
HUB_ID = "Lin-Chen/MMStar"
#: the official repository and the commit whose scoring rule and tables are cited
OFFICIAL_REPO, OFFICIAL_COMMIT = "MMStar-Benchmark/MMStar", "88f243ab4a39cb339530085c33aecb22819881a1"

#: capability -> its three axes, in the order of ``MMStar_eval`` (eval/vlmeval/evaluate/mmstar.py) and Figure 3
CAPABILITIES: dict[str, tuple[str, str, str]] = {
    "coarse perception": ("image scene and topic", "image style & quality", "image emotion"),
    "fine-grained perception": ("object counting", "recognition", "localization"),
    "instance reasoning": ("single-instance reasoning", "cross-instance attribute reasoning",
                           "cross-instance relation reasoning"),
    "logical reasoning": ("code & sequence reasoning", "diagram reasoning", "common reasoning"),
    "science & technology": ("biology & chemistry & physics", "electronics & energy & mechanical eng.",
                             "geography & earth science & agriculture"),
    "math": ("geometry", "numeric commonsense and calculation", "statistical reasoning"),
}
#: the paper's abbreviations (Table 3 caption)
ABBREVIATIONS = {"coarse perception": "CP", "fine-grained perception": "FP", "instance reasoning": "IR",
                 "logical reasoning": "LR", "science & technology": "ST", "math": "MA"}
#: id -> (axis, capability): the 18 axes
DIMENSIONS: dict[int, tuple[str, str]] = {
    i + 1: (axis, cap) for i, (cap, axis) in enumerate((c, a) for c, axes in CAPABILITIES.items() for a in axes)}
AXIS_IDS = {(cap, axis): k for k, (axis, cap) in DIMENSIONS.items()}
#: the six capabilities (250 items each in the release) and the overall score ("final score")
GROUPS = {**{cap: tuple(k for k, (_a, c) in DIMENSIONS.items() if c == cap) for cap in CAPABILITIES},
          "Overall": tuple(DIMENSIONS)}
NEEDED = ("index", "question", "answer", "category", "l2_category")
LETTERS = "ABCD"

_PAREN = re.compile(r"^\(([A-D])\)\s?(.*)$")


def split_options(text: str) -> tuple[str, list[str]]:
    """``(stem, options)`` of a question with its options inline: ``Options: A: x, B: y, ...`` (the last such
    block) or lines ``(A) x`` / ``(B) y`` (a ``Choices:`` line before them dropped). Trailing ``nan`` options
    are dropped. ValueError saying why when neither form is there or the separators are ambiguous."""
    at = text.rfind("Options: A: ")
    if at >= 0:
        body, opts, start = text[at + len("Options: A: "):], [], 0
        for letter in "BCD":
            sep = f", {letter}: "
            if body.count(sep) > 1:
                raise ValueError(f"the options are ambiguous: {sep.strip()!r} occurs {body.count(sep)} times")
            pos = body.find(sep, start)
            if pos < 0:
                break
            opts.append(body[start:pos])
            start = pos + len(sep)
        opts.append(body[start:])
        stem = text[:at].rstrip()
    else:
        lines = text.split("\n")
        first = next((i for i, ln in enumerate(lines) if ln.startswith("(A)")), None)
        if first is None:
            raise ValueError("no options found: expected 'Options: A: ..., B: ...' or lines '(A) ...'")
        opts = []
        for ln in lines[first:]:
            m = _PAREN.match(ln)
            if not m or m.group(1) != LETTERS[len(opts)]:
                raise ValueError(f"expected option line ({LETTERS[len(opts)] if len(opts) < 4 else '-'}) ..., "
                                 f"found {ln[:40]!r}")
            opts.append(m.group(2))
        head = lines[:first]
        if head and head[-1].strip() == "Choices:":
            head = head[:-1]
        stem = "\n".join(head).rstrip()
    opts = [o.strip() for o in opts]
    while opts and opts[-1] == "nan":
        opts.pop()
    if len(opts) < 2:
        raise ValueError(f"expected 2-4 options, found {len(opts)}")
    return stem, opts


def _text(row: dict, key: str, path, qid) -> str:
    v = require(row, key, path, qid)
    if not isinstance(v, str) or not v.strip():
        raise DataError(str(path), f"expected a non-empty string, got {v!r}", qid, key)
    return v


def record_to_item(row: dict, i: int, path, seen: dict, image_dir: Path) -> Item:
    """One row (hub parquet or VLMEvalKit TSV) -> ``Item``; DataError naming file, item and field."""
    raw_id = require(row, "index", path, f"#{i}", (str, int))
    qid = str(raw_id)
    check_unique(seen, qid, path, f"row #{i}")
    source = _text(row, "question", path, qid)
    if all(row.get(k) not in (None, "") for k in "AB"):  # a TSV with option columns: the question is the stem
        stem = source
        choices = [str(row[k]).strip() for k in LETTERS if row.get(k) not in (None, "", "nan")]
    else:
        try:
            stem, choices = split_options(source)
        except ValueError as e:
            raise DataError(str(path), f"cannot parse the options out of the question: {e}", qid, "question") from None
    answer = _text(row, "answer", path, qid).strip()
    if answer not in LETTERS[:len(choices)]:
        raise DataError(str(path), f"answer must be one of {list(LETTERS[:len(choices)])} (the parsed options), "
                                   f"got {answer!r}", qid, "answer")
    cap, axis = _text(row, "category", path, qid).strip(), _text(row, "l2_category", path, qid).strip()
    if cap not in CAPABILITIES:
        raise DataError(str(path), f"unknown core capability {cap!r}; expected one of {list(CAPABILITIES)}", qid, "category")
    if (cap, axis) not in AXIS_IDS:
        raise DataError(str(path), f"unknown axis {axis!r} of {cap!r}; expected one of {list(CAPABILITIES[cap])}",
                        qid, "l2_category")
    dim = AXIS_IDS[(cap, axis)]
    image = row.get("image")
    if isinstance(image, list):  # a TSV cell: a list of base64 strings
        image = tables.image_bytes(image[0], path, qid, "image") if image else None
    elif isinstance(image, str):
        image = tables.image_bytes(image, path, qid, "image")
    p, error = write_image(image, image_dir, f"mmstar_{qid}")
    item = Item(id=qid, benchmark=BENCHMARK, split="val", question=stem, choices=choices, answer=answer,
                dimension_id=dim, dimension=axis, group=cap, images=[p or ""],
                meta={"source_question": source, "options_as_written": source[len(stem):] if source.startswith(stem) else "",
                      "bench": row.get("bench"), "meta_info": row.get("meta_info")})
    if error:
        item.meta["media_error"] = f"image: {error}"
    return item


def _files(path: Path) -> tuple[str, list[Path]]:
    if not path.exists():
        raise DataError(str(path), "data file not found (the hub parquet, a folder holding it, or MMStar.tsv)")
    if path.is_dir():
        files = sorted(path.rglob("*.parquet"))
        if not files:
            raise DataError(str(path), f"expected a folder holding the MMStar parquet; found "
                                       f"{sorted(x.name for x in path.iterdir())[:8]}")
        return "parquet", files
    kind = tables.sniff(path)
    if kind not in ("parquet", "tsv"):
        raise DataError(str(path), "expected the MMStar hub parquet or VLMEvalKit's MMStar.tsv; found a file that is neither")
    return kind, [path]


def probe(annotation_file) -> str:
    """A cheap look (layout, columns, first row): ``parquet`` or ``tsv``; DataError naming file, expected, found."""
    kind, files = _files(Path(annotation_file))
    if kind == "parquet":
        tables.require_columns(files[0], tables.parquet_columns(files[0]), (*NEEDED, "image"), "the MMStar hub parquet")
    else:
        rows = tables.read_tsv(files[0], limit=1)
        tables.require_columns(files[0], rows[0] if rows else {}, (*NEEDED, "image"), "VLMEvalKit's MMStar.tsv")
    return kind


def load(annotation_file: str | os.PathLike, dimensions: list[int] | str | None = None,
         cache_dir: str | os.PathLike | None = None) -> list[Item]:
    """Items of the hub parquet (a file, or a folder such as a hub snapshot holding it) or of VLMEvalKit's
    ``MMStar.tsv``; images written once under ``cache_dir``. ``dimensions``: axis ids 1-18 or ``"all"``."""
    path = Path(annotation_file)
    kind, files = _files(path)
    probe(path)
    rows = read_parquet(files) if kind == "parquet" else tables.read_tsv(files[0])
    keep = None if dimensions in ("all", None) else \
        {int(d) for d in ([dimensions] if isinstance(dimensions, (int, str)) else dimensions)}
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir(str(path), BENCHMARK)
    items, seen = [], {}
    for i, row in enumerate(rows):
        item = record_to_item(row, i, files[0], seen, cache)
        if keep is None or item.dimension_id in keep:
            items.append(item)
    return items


# ------------------------------------------------------------------------------------ the submission format
#: the columns of VLMEvalKit's MMStar prediction file (eval/submits/llava_next_yi_34b_MMStar.xlsx at 88f243a)
XLSX_COLUMNS = ("index", "question", "answer", "category", "l2_category", "bench", "prediction")


def read_xlsx(path) -> list[dict]:
    """The rows of a VLMEvalKit-style ``.xlsx`` (or ``.tsv``) prediction file; DataError naming the file and the
    missing column."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise DataError(str(path), "prediction file not found")
    try:
        df = pd.read_excel(path, dtype=str, keep_default_na=False) if path.suffix.lower() == ".xlsx" else \
            pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    except Exception as e:  # noqa: BLE001 - openpyxl and pandas raise several types for a bad file
        raise DataError(str(path), f"expected a VLMEvalKit .xlsx prediction file, found an unreadable one "
                                   f"({type(e).__name__}: {e})") from None
    tables.require_columns(path, list(df.columns), ("index", "answer", "category", "l2_category", "prediction"),
                           "a VLMEvalKit MMStar prediction file")
    return df.to_dict("records")


def score_xlsx(path) -> tuple[list[dict], dict]:
    """``(rows, summary)`` of a VLMEvalKit MMStar prediction file scored by the official rule
    (``tasks.letters.mmstar_letter``, equivalent to ``MMStar_eval``'s comparison for the letters A-D).
    ``summary["official"]``: ``MMStar_eval``'s keys (``final score``, each capability, ``capability(axis)``) with
    their item counts; accuracy is hits / items (``MMStar_eval`` divides by 250 and 1,500, the same on the full set)."""
    rows, seen = [], {}
    for i, r in enumerate(read_xlsx(path)):
        qid = str(r["index"])
        check_unique(seen, qid, path, f"row #{i + 2}")
        cap, axis = str(r["category"]), str(r["l2_category"])
        if (cap, axis) not in AXIS_IDS:
            raise DataError(str(path), f"unknown capability/axis {cap!r}/{axis!r}", qid, "l2_category")
        got = mmstar_letter(r["prediction"])
        gold = str(r["answer"]).strip().upper()
        rows.append({"id": qid, "dimension_id": AXIS_IDS[(cap, axis)], "dimension": axis, "group": cap,
                     "bench": r.get("bench"), "response": r["prediction"], "parsed_pred": got.letter,
                     "prediction": got.letter, "answer": gold, "correct": got.letter == gold, "mode": got.mode,
                     "fallback": False, "status": "ok"})
    official: dict = {}

    def add(name, sub):
        official[name] = {"num": len(sub), "acc": sum(x["correct"] for x in sub) / len(sub) if sub else 0.0}

    add("final score", rows)
    for cap, axes in CAPABILITIES.items():
        add(cap, [x for x in rows if x["group"] == cap])
        for axis in axes:
            add(f"{cap}({axis})", [x for x in rows if x["group"] == cap and x["dimension"] == axis])
    modes: dict = {}
    for x in rows:
        modes[x["mode"]] = modes.get(x["mode"], 0) + 1
    warnings = [] if len(rows) == 1500 else [f"{len(rows)} items, not the 1,500 of the release: MMStar_eval would "
                                            "still divide by 250 per capability and 1,500 overall"]
    return rows, {"overall": official["final score"]["acc"], "official": official,
                  "counts": {"items": len(rows), **{f"read by {k}": v for k, v in sorted(modes.items())}},
                  "warnings": warnings, "rule": f"MMStar_eval, eval/vlmeval/evaluate/mmstar.py, {OFFICIAL_REPO}@{OFFICIAL_COMMIT[:7]}"}


def write_xlsx(items: list[Item], predictions: dict, out) -> Path:
    """A VLMEvalKit-style MMStar prediction file (``XLSX_COLUMNS``; the question as the file wrote it) from
    ``predictions`` (item id -> the model's answer text or letter); the official submission format."""
    import pandas as pd

    rows = [{"index": int(it.id) if str(it.id).isdigit() else it.id, "question": it.meta.get("source_question") or it.question,
             "answer": it.answer, "category": it.group, "l2_category": it.dimension, "bench": it.meta.get("bench") or "",
             "prediction": "" if predictions.get(it.id) is None else str(predictions[it.id])} for it in items]
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=list(XLSX_COLUMNS)).to_excel(out, index=False, engine="openpyxl")
    return out


class MMStarTask(SeedTask):
    """MMStar: the SEED ranking contract over the parsed options; 18 axes grouped into six capabilities."""

    name = BENCHMARK
    aliases = ("mm-star",)
    title = "MMStar"
    paper = "mmstar"  # notebook 40: papers=mmstar draws Tables 3 and 5
    order = 40
    #: Table 3 (16 LVLMs), Table 5 (LLMs), Tables 1, 2, 7 (six benchmarks with and without images)
    published_tables = ("mmstar_table3", "mmstar_table5", "mmstar_table1", "mmstar_table2", "mmstar_table7")
    #: Table 3 / Table 5 columns (cp ... ma, avg) -> the capability groups; Avg. = the plain mean of six capabilities of
    #: 250 questions each = the pooled accuracy over all questions (§5.1)
    table_groups = {**{abbr.lower(): cap for cap, abbr in ABBREVIATIONS.items()}, "avg": "Overall"}
    audit = AuditPart("mmbench_lib.tasks.mmstar_audit")  # mmbench audit (docs/audit.md, MMStar section)
    blind_reference = None  # MMStar's own tables are its published tables
    #: notebook 50's protocols. The official one is a generated answer read by heuristic matching (MMStar paper A.1,
    #: "Implementation details": 0-shot for LVLMs, a VLMEvalKit-based codebase, no GPT-4 extraction; the rule is
    #: ``MMStar_eval`` of eval/vlmeval/evaluate/mmstar.py at 88f243a: recipe ``mmstar-gen``, read by ``mmstar``).
    #: The paper ranks nothing, so every ranked reading (SEED's recipes) and the harnesses' readings are NOT official.
    ranking_protocols = {p.key: p for p in (
        Protocol("official", "generated, official", "official: MMStar (paper A.1) generated answer, 0-shot, lmms-eval's "
                 "mmstar prompt, read by MMStar_eval's matching rule", "mmstar-gen", "mmstar"),
        Protocol("content-sum", "content, sum", "NOT official: MMStar has no ranking protocol; SEED v1's recipe, summed "
                 "NLL of the option text", "seed1-ppl", "sum"),
        Protocol("content-mean", "content, mean", "NOT official: MMStar has no ranking protocol; SEED v1's recipe, mean "
                 "NLL of the option text", "seed1-ppl", "mean"),
        Protocol("letters", "letters ranked", "NOT official: MMStar has no ranking protocol; options in the prompt, "
                 "letters ranked by mean NLL (Qwen-VL recipe)", "qwen-vl-letters", "mean"),
        Protocol("gen-vlmevalkit", "generated, VLMEvalKit", RANKING_PROTOCOLS["gen-vlmevalkit"].kind.replace(
            "NOT a paper protocol", "NOT official") + " (VLMEvalKit's generic can_infer, not MMStar's rule)",
                 "vlmevalkit-gen", "vlmevalkit"),
    )}
    default_ranking_protocols = ("official", "content-sum", "content-mean", "letters", "gen-vlmevalkit")
    dimensions = DIMENSIONS
    groups = GROUPS
    numbered_dimensions = False
    results_need_questions = False
    splits, default_split = ("val",), "val"
    split_sizes = {"val": 1500}  # the val set: 6 x 250 (A.3)
    named_selections = ()
    hub_id = HUB_ID
    demo_keys = ("annotation_file",)
    path_parameters = ("annotation_file",)
    demo_filters = ("dimensions",)
    module = sys.modules[__name__]
    layouts = (
        Layout("parquet", "the hub parquet (Lin-Chen/MMStar, the copy lmms-eval's mmstar task reads): mmstar.parquet, "
                          "or a folder holding it (a hub snapshot); options inline in 'question', image inlined"),
        Layout("tsv", "VLMEvalKit's MMStar.tsv (base64 image, 'bench' column; options inline or in A-D columns)"),
    )

    #: the official submission format, scored by ``mmbench score-responses --benchmark mmstar`` (:func:`score_xlsx`)
    official_output = "vlmevalkit-xlsx"
    official_output_help = ("VLMEvalKit's MMStar prediction .xlsx (index, question, answer, category, l2_category, "
                            "bench, prediction), e.g. eval/submits/llava_next_yi_34b_MMStar.xlsx of MMStar-Benchmark/MMStar",
                            "not needed: the file carries the answers")

    def unread_paths(self, values: dict) -> tuple[str, ...]:
        return ()

    def score_official(self, responses, answers=None, questions=None, **kw):
        """The official rule over a VLMEvalKit prediction file (:func:`score_xlsx`); ``--no-random`` changes
        nothing (the rule draws no random answer)."""
        return score_xlsx(responses)

    def write_submission(self, items, stored, rows, out):
        """The VLMEvalKit ``.xlsx`` (:func:`write_xlsx`) of a run's rows: the response, else the predicted letter."""
        preds = {r["id"]: r.get("response") if r.get("response") is not None else r.get("prediction") for r in rows}
        return write_xlsx(items, preds, out)

    def probe(self, location, split=None, args: dict | None = None) -> str:
        return probe(location)


register_task(MMStarTask)
