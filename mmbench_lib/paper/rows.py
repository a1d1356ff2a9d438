"""Our runs as rows beside the papers': the runs read and labelled (the one label, ``analysis.results``), each
folder once, the columns our item rows fill, and the helpers that join them to a published table.

More: docs/modules.md, ``mmbench_lib/paper/rows.py``.
"""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Iterable, Sequence

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from mmbench_lib.analysis import reader
from mmbench_lib.analysis.reader import Run
from mmbench_lib.analysis.compare import unpairable
from mmbench_lib.analysis.results import data_source, random_weights, run_result, sub_runs
from mmbench_lib.core.store import METRICS
from mmbench_lib.core.datasource import is_demo
from mmbench_lib.core import manifest
from mmbench_lib.core.metrics import SCORED
from mmbench_lib import published
from mmbench_lib.paper import ours as ours_mod
from mmbench_lib.analysis import tables as tables_mod  # noqa: E402
from mmbench_lib.paper.ours import Column, every, field_in, group, has_tag  # noqa: E402
from mmbench_lib.tasks.base import all_tasks, get_task
from mmbench_lib.core.uncertainty import compare_runs
from mmbench_lib.analysis import plots
from mmbench_lib.paper import figures
from mmbench_lib.core.record import differences

OURS_COLOR = figures.OURS_COLOR
PAPER = "paper"
OURS = "ours"

# --------------------------------------------------------------------------- our runs
SEED2_LEVELS = [  # (column prefix in seed2_table2, metrics group, label in the paper)
    ("l1", "L1", "L1"),
    ("part2", "Part-2 (Interleaved)", "Part-2"),
    ("l2", "L2", "L2"),
    ("part3", "Part-3 (Image output)", "Part-3"),
    ("l3", "L3", "L3"),
]
SEED1_GROUPS = [("spatial", "Image", "Spatial"), ("temporal", "Video", "Temporal"), ("overall", "All", "Overall")]
MMMU_DISCIPLINES = {  # column of mmmu_table2 / cmmmu_table4 -> discipline names (MMMU, CMMMU in English)
    "art_design": ("Art and Design", "Art & Design"), "business": ("Business",), "science": ("Science",),
    "health_medicine": ("Health and Medicine", "Health & Medicine"),
    "humanities_social_sci": ("Humanities and Social Science", "Humanities & Social Sciences"),
    "tech_engineering": ("Tech and Engineering", "Technology & Engineering"),
}
DIFFICULTY_COLUMNS = {  # MMMU topic_difficulty / CMMMU difficulty_level
    "easy": Column("easy", field_in("difficulty", ["Easy", "easy"])),
    "medium": Column("medium", field_in("difficulty", ["Medium", "medium", "middle"])),
    "hard": Column("hard", field_in("difficulty", ["Hard", "hard"])),
    "overall": Column("overall", every),
}
QUESTION_TYPE_COLUMNS = {
    "multiple_choice": Column("multiple_choice", field_in("question_type", ["multiple-choice"])),
    "fill_in_the_blank": Column("fill_in_the_blank", field_in("question_type", ["fill-in-the-blank"])),
    "true_or_false": Column("true_or_false", field_in("question_type", ["true-false"])),
    "overall": Column("overall", every),
}


def seed2_columns() -> dict[str, Column]:
    """Table 2's averages: plain means of dimension accuracies (source note)."""
    return {f"{p}_acc": group(f"{p}_acc", get_task(owner("seed2_table2")).groups[g], "dim_mean") for p, g, _ in SEED2_LEVELS}


def seed1_columns(average: str = "micro") -> dict[str, Column]:
    return {f"{p}_acc": group(f"{p}_acc", get_task(owner("seed1_table3")).groups[g], average) for p, g, _ in SEED1_GROUPS}


def resolve_run(path) -> Path:
    """A run folder or run id: ``analysis.reader.resolve_run``, the one resolver."""
    return reader.resolve_run(path)


def load_run(path) -> Run:
    """The :class:`~mmbench_lib.analysis.reader.Run` of a run folder (``resolve_run``), labelled
    ``model [how] (ours)`` for the tables."""
    run = reader.load_run(resolve_run(path))
    run.label = label_of(run)
    return run


def label_of(run: Run) -> str:
    """``<the one label> (ours)``: ``analysis.results.label`` of the run (model, protocol, setting, data, as
    ``results.json``, ``metrics`` and ``compare`` show it), so a demo run never reads as a full-split row."""
    return f"{run_result(run, run.folder)['label']} (ours)"


run_key = reader.run_key


def _identity(run: Run) -> str:
    """What makes two run folders the same run: the same settings (``core.record.RunRecord.identity``) on the same
    data files with the same answers; a run without a recorded config is itself only."""
    record = run.record
    if not record.params:
        return str(Path(run.folder).resolve())
    s = run.samples  # and the same answers (an edited copy is another run)
    answers = sorted(zip(s["id"].astype(str), s["prediction"].astype(str), s["correct"].astype(str))) if len(s) else []
    return json.dumps([run.benchmark, record.identity(), record.data_sha256, record.n_items, answers],
                      sort_keys=True, default=str)


def expand(runs) -> list:
    """``runs`` with each folder of sub-runs (a generation run's top folder, the quickstart's pairs) replaced by its
    sub-runs (``analysis.results.sub_runs``), as ``mmbench compare`` takes them; run ids resolved."""
    out = []
    for r in runs or []:
        if isinstance(r, Run):
            out.append(r)
            continue
        folder = resolve_run(r)
        out += [folder] if (folder / METRICS).is_file() else (sub_runs(folder) or [folder])
    return out


def _as_runs(runs) -> list[Run]:
    """``runs`` as labelled :class:`Run` objects, each folder once (the same run given twice, e.g. a demo run the
    notebook adds and the user names again, is one row and never paired with itself)."""
    out, seen = [], set()
    for r in expand(runs):
        run = r if isinstance(r, Run) else load_run(r)
        key = _identity(run)
        if key not in seen:
            seen.add(key)
            out.append(run)
    for r in out:
        r.label = r.label or label_of(r)
    keys = [(r.benchmark, r.label) for r in out]
    for r, key in zip(out, keys):  # the same model+recipe twice on one benchmark: tell the rows apart by folder
        if keys.count(key) > 1:
            r.label = f"{r.label} {r.key}"
    return out


def _benchmark(run: Run) -> str:
    return run.benchmark


def owner(table: str) -> str:
    """The benchmark whose runs join the published table ``table``: the task listing it in ``published_tables``."""
    names = [t.name for t in all_tasks() if table in t.published_tables]
    if len(names) != 1:
        raise ValueError(f"published table {table!r} is claimed by {names or 'no task'}; exactly one task must list it")
    return names[0]


def paper_tasks(paper: str) -> list[str]:
    """The benchmarks whose tables a ``papers`` value renders (``Task.paper``)."""
    return [t.name for t in all_tasks() if t.paper == paper]


def not_comparable(run: Run) -> str:
    """Why ``run`` cannot be ranked among the papers' rows (their full splits, trained models, official
    prompts), or ``""``: the data (``demo data``, ``subset (n=...)``), a random-weight model (``tiny-*``, whose
    model record says so), a prompt mode other than the paper's."""
    why = []
    source = data_source(run)
    if source != "full split":
        why.append(source)
    if random_weights(run):
        why.append("random-weight model")
    if plots.mode_note(run.metrics):
        why.append(plots.mode_note(run.metrics))
    return ", ".join(why)


def judge_of(run: Run) -> str:
    """Who judged the run's image-output items (SEED-2 Part 3), in words, or ``""``: the CLIP model, its weights
    (``random weights`` when none) and where the judged images came from (the model, or a folder made elsewhere,
    the demo's pre-made images included: then the score is not the model's)."""
    judge = run.manifest.get("image_output") or {}
    judged = {g for _, g, label in SEED2_LEVELS if label.startswith("Part-3")}  # Table 2's image-output part
    scored = [g for g in run.metrics.get("groups") or [] if g.get("group") in judged and g.get("n")]
    if not judge or not scored:
        return ""
    weights = judge.get("clip_pretrained") or "random weights"
    where = judge.get("generated_dir")
    images = "the model's own images" if not where else (
        "the demo's pre-made images, not the model's" if is_demo(where) else f"images from {Path(where).name}/")
    return f"CLIP {judge.get('clip_model')} ({weights}) judging {images}"


def _ours_rows(runs, benchmarks: Iterable[str], columns: dict[str, Column], decimals: int) -> list[dict]:
    """One row per run of ``benchmarks``: each column recomputed from the run's item rows, at the
    paper's print precision (so that a tie with a printed value is a tie); ``not_ranked`` says why a row that is
    not comparable with the papers' (:func:`not_comparable`) is left out of every rank."""
    rows = []
    for r in _as_runs(runs):
        if _benchmark(r) not in set(benchmarks):
            continue
        row = {"model": r.label, "source": OURS, "recipe": r.metrics.get("recipe"),
               "reduction": r.metrics.get("reduction"), "run": r.key, "not_ranked": not_comparable(r),
               "judge": judge_of(r)}
        for col, v in ours_mod.point_values(r, columns).items():
            row[col] = round(v, decimals) if not math.isnan(v) else math.nan
        rows.append(row)
    return rows


def _with_ours(pub: pd.DataFrame, ours: list[dict]) -> pd.DataFrame:
    df = pub.copy()
    df.insert(len(df.columns), "source", PAPER)
    frame = pd.concat([df, pd.DataFrame(ours)], ignore_index=True) if ours else df
    for c in ("recipe", "reduction", "run"):
        if c not in frame:
            frame[c] = None
    for c in ("not_ranked", "judge"):
        frame[c] = frame[c].fillna("") if c in frame else ""
    return frame


def _intervals(df: pd.DataFrame, runs: list[dict], columns: dict[str, Column], decimals: int,
               ranks: dict[str, str] | None = None) -> pd.DataFrame:
    """``<col>_ci_low/high`` for our rows, and ``<rank col>_low/high`` where ranks are given."""
    ranks = ranks or {}
    out = ours_mod.add_intervals(df, runs, columns, decimals, ranked=list(ranks.values()))
    for rank_col, value_col in ranks.items():
        out = out.rename(columns={f"{value_col}_rank_low": f"{rank_col}_low", f"{value_col}_rank_high": f"{rank_col}_high"})
    return out


def _rerank(df: pd.DataFrame, ranks: dict[str, str]) -> pd.DataFrame:
    """Keep printed ranks as ``<rank>_printed``; ``<rank>`` = competition rank over the comparable rows (the papers'
    and ours with an empty ``not_ranked``); a row that is not comparable gets no rank."""
    ranked = (df["not_ranked"] == "").to_numpy() if "not_ranked" in df else np.ones(len(df), bool)
    for rank_col, value_col in ranks.items():
        if rank_col in df:
            df.insert(df.columns.get_loc(rank_col) + 1, f"{rank_col}_printed", df[rank_col].astype("Int64"))
        values = [v if ok else math.nan for v, ok in zip(df[value_col].tolist(), ranked)]
        df[rank_col] = pd.array(published.competition_rank(values), dtype="Float64").astype("Int64")
    return df
