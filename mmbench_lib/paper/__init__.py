"""The papers' tables and figures, rebuilt from the transcribed published results
(:mod:`mmbench_lib.published`), with the user's own runs added as rows marked ``source="ours"``.

* SEED-Bench-2: Table 2 (:func:`seed2_table2`) and the Fig. 5 rank heat-map (:func:`rank_heatmap`).
* SEED-Bench v1: Table 3 (:func:`seed1_table3`), the Fig. 5 per-dimension leaderboards
  (:func:`seed1_leaderboards`) and the Fig. 6 rank heat-map (:func:`seed1_rank_frame`).
* MMMU: Table 2 (disciplines), Tables 4-9 (subjects), Table 3 (difficulty), Table 12 (image types, as a bar chart),
  Fig. 6 (GPT-4V error distribution); CMMMU: Tables 4-6 and Fig. 4.

Our rows are recomputed from the run's item rows (``predictions.jsonl`` / ``scored.jsonl``) by
:mod:`mmbench_lib.paper.ours`, each with the one 95% interval (``core.uncertainty.RULE``) (``<col>_ci_low/high``) and,
in the ranked tables and heat-maps, a rank interval (``<rank col>_low/high``). Published rows carry
no item-level data: they get no interval, and the figures say so.

More: docs/modules.md, ``mmbench_lib/paper/__init__.py``.
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


# --------------------------------------------------------------------------- SEED-Bench-2
def seed2_table2(runs=None) -> pd.DataFrame:
    """SEED-Bench-2 Table 2 (L1 / Part-2 / L2 / Part-3 / L3 averages and ranks) plus our runs.

    The paper's averages are plain means of dimension accuracies (see the ``seed2_table2`` source
    note), so our rows use ``accuracy_dim_mean`` of the groups L1, Part-2 (Interleaved), L2,
    Part-3 (Image output) and L3. A group our run does not hold completely is empty.
    """
    runs = _as_runs(runs)
    ours = _ours_rows(runs, [owner("seed2_table2")], seed2_columns(), 1)
    df = _rerank(_with_ours(published.load("seed2_table2"), ours), published.RANKS["seed2_table2"])
    return _intervals(df, runs, seed2_columns(), 1, published.RANKS["seed2_table2"])


# --------------------------------------------------------------------------- SEED-Bench v1
def seed1_table3(runs=None, average: str = "micro") -> pd.DataFrame:
    """SEED-Bench v1 Table 3 (Spatial / Temporal / Overall) plus our runs.

    Overall in the paper is pooled over questions (source note), so our rows default to the
    question-weighted ``accuracy_micro`` of the groups Image, Video and All (``average="dim_mean"``
    for the plain dimension means). Values at the paper's 2 decimals.
    """
    runs = _as_runs(runs)
    ours = _ours_rows(runs, [owner("seed1_table3")], seed1_columns(average), 2)
    for row in ours:
        row["model_type"] = "ours"
    df = _rerank(_with_ours(published.load("seed1_table3"), ours), published.RANKS["seed1_table3"])
    return _intervals(df, runs, seed1_columns(average), 2, published.RANKS["seed1_table3"])


def seed1_leaderboard_table(runs=None) -> pd.DataFrame:
    """Fig. 5 in long form (dimension, printed rank, model, accuracy) plus our per-dimension accuracies
    with their 95% interval (the one rule) and n scored questions (rank empty: ranks 1-5 of the figure are not legible, so ours
    cannot be placed among them)."""
    df = published.load("seed1_fig5_leaderboards")
    df.insert(len(df.columns), "origin", PAPER)
    rows = []
    for r in _as_runs(runs):
        if _benchmark(r) != owner("seed1_fig5_leaderboards"):
            continue
        for d in r.metrics.get("per_dimension", []):
            acc = None if d.get("accuracy") is None else 100 * d["accuracy"]  # fractions in metrics.json
            lo, hi = (None if d.get(k) is None else 100 * d[k] for k in ("ci_low", "ci_high"))
            rows.append({"dimension_id": int(d["dimension_id"]), "dimension": d["dimension"], "rank": math.nan,
                         "model": r.label, "accuracy": math.nan if acc is None else round(acc, 2),
                         "source": f"run {r.key}", "origin": OURS, "n": d.get("n"),
                         "accuracy_ci_low": math.nan if lo is None else lo,
                         "accuracy_ci_high": math.nan if hi is None else hi})
    if rows:
        df = pd.concat([df, pd.DataFrame(rows)], ignore_index=True)
    df["rank"] = df["rank"].astype("Float64").astype("Int64")
    return df


def seed1_leaderboards(table: pd.DataFrame | None = None, ncols: int = 4):
    """Fig. 5: one horizontal bar chart per dimension (:func:`mmbench_lib.paper.figures.leaderboards`)."""
    return figures.leaderboards(seed1_leaderboard_table() if table is None else table, ncols)


def seed1_rank_frame(runs=None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The data of SEED v1 Fig. 6 (rank heat-map): rows = Table 3 models (+ ours), columns =
    the 12 dimensions (ranks printed in Fig. 5) and Spatial / Temporal / Overall (recomputed from
    Table 3 + ours). Returns ``(ranks, cell_text, intervals)``: a model missing from a dimension's
    legible ranks 6-18 is in that panel's top 5 (order unknown): rank empty, text "1-5";
    ``intervals`` holds our rows' rank intervals (Spatial / Temporal / Overall only)."""
    t3 = seed1_table3(runs)
    lb = published.load("seed1_fig5_leaderboards")
    dims = lb[["dimension_id", "dimension"]].drop_duplicates("dimension_id").sort_values("dimension_id")
    ranks = pd.DataFrame({"model": t3["model"], "source": t3["source"], "not_ranked": t3["not_ranked"]})
    text = ranks.copy()
    for _, d in dims.iterrows():
        col = f"{int(d['dimension_id'])}. {d['dimension']}"
        panel = lb[lb["dimension_id"] == d["dimension_id"]].set_index("model")["rank"]
        ranks[col] = [panel.get(m, math.nan) if s == PAPER else math.nan for m, s in zip(t3["model"], t3["source"])]
        text[col] = ["1-5" if s == PAPER and m not in panel.index else "" for m, s in zip(t3["model"], t3["source"])]
    for p, _, label in SEED1_GROUPS:
        ranks[label] = t3[f"{p}_rank"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
        text[label] = ""
    intervals = rank_interval_text(t3, {f"{p}_rank": f"{p}_acc" for p, _, _ in SEED1_GROUPS},
                                   {f"{p}_rank": label for p, _, label in SEED1_GROUPS})
    for c in ranks.columns:
        if c not in intervals:
            intervals[c] = ""
    return ranks, text, intervals


# --------------------------------------------------------------------------- rank heat-map
rank_heatmap = figures.rank_heatmap


def rank_interval_text(table: pd.DataFrame, ranks: dict[str, str], columns: dict[str, str] | None = None) -> pd.DataFrame:
    """``"low-high"`` per row for each rank column that has ``<rank>_low/_high`` (empty elsewhere),
    under the value column's name (or ``columns[rank col]``)."""
    out = pd.DataFrame(index=table.index)
    for rank_col, value_col in ranks.items():
        name = (columns or {}).get(rank_col, value_col)
        lo, hi = table.get(f"{rank_col}_low"), table.get(f"{rank_col}_high")
        if lo is None:
            out[name] = ""
            continue
        out[name] = ["" if pd.isna(a) or pd.isna(b) else (f"{int(a)}" if a == b else f"{int(a)}-{int(b)}")
                     for a, b in zip(lo, hi)]
    return out


def seed2_heatmap(table: pd.DataFrame | None = None):
    """SEED-2 Fig. 5 from :func:`seed2_table2`: its ranks (over the comparable rows only), our rows that are not
    comparable drawn apart, and who judged our Part-3 (image output) under the figure."""
    table = seed2_table2() if table is None else table
    ranks = pd.DataFrame({"model": table["model"], "source": table["source"]})
    present = pd.DataFrame(index=table.index)
    for p, _, label in SEED2_LEVELS:
        ranks[label] = table[f"{p}_rank"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
        present[label] = table[f"{p}_acc"].notna()
    judges = [f"{m.replace(' (ours)', '')}: Part-3 scored by {j}" for m, j in zip(table["model"], table.get("judge", []))
              if isinstance(j, str) and j]
    return rank_heatmap(ranks, [label for *_, label in SEED2_LEVELS], ranks_given=True,
                        intervals=rank_interval_text(table, published.RANKS["seed2_table2"],
                                                     {f"{p}_rank": label for p, _, label in SEED2_LEVELS}),
                        unranked=table.get("not_ranked"), present=present,
                        title="SEED-Bench-2, Fig. 5: rank by capability level",
                        note="\n".join(["Ranks: competition ranks of Table 2's averages, recomputed over the rows "
                                        "ranked (the papers' and our comparable runs).", *judges]))


def seed1_heatmap(runs=None):
    ranks, text, intervals = seed1_rank_frame(runs)
    cols = [c for c in ranks.columns if c not in ("model", "source", "not_ranked")]
    groups = {label for *_, label in SEED1_GROUPS}  # our rows hold values only there (no per-dimension rank)
    present = pd.DataFrame({c: [c in groups] * len(ranks) for c in cols}, index=ranks.index)
    return rank_heatmap(ranks, cols, ranks_given=True, cell_text=text, intervals=intervals, unranked=ranks["not_ranked"],
                        present=present,
                        title="SEED-Bench v1, Fig. 6: rank per evaluation dimension",
                        note="Dimensions: ranks printed in Fig. 5 (ranks 1-5 not legible: '1-5' = in the top 5, order "
                             "unknown). Spatial/Temporal/Overall: recomputed from Table 3. Our runs are ranked "
                             "only in those three.")


# --------------------------------------------------------------------------- MMMU / CMMMU
def _discipline_table(name: str, runs, benchmark: str) -> pd.DataFrame:
    """MMMU Table 2 / CMMMU Table 4 plus our runs (discipline groups and Overall, question-weighted,
    as the papers do). Our Overall goes to ``val_overall`` or ``test_overall`` by the run's split;
    the discipline columns of the papers are test-set numbers, ours are from the run's own split."""
    cols = {c: Column(c, field_in("group", names)) for c, names in MMMU_DISCIPLINES.items()}
    return _with_split_overall(name, runs, benchmark, cols, every)


def _with_split_overall(name: str, runs, benchmark: str, cols: dict[str, Column], overall) -> pd.DataFrame:
    """A published table whose overall comes as ``val_overall`` / ``test_overall``, plus our runs of
    ``benchmark``: ``cols`` from their item rows and ``overall`` (a row selector) under the column
    of their split, with 95% Wilson intervals."""
    runs = _as_runs(runs)
    rows, all_cols = [], dict(cols)
    for r in runs:
        if _benchmark(r) != benchmark:
            continue
        split = str(r.metrics.get("split") or r.manifest.get("data", {}).get("split") or "validation")
        over = "test_overall" if split.startswith("test") else "val_overall"
        all_cols[over] = Column(over, overall)
        (row,) = _ours_rows([r], [benchmark], {**cols, over: all_cols[over]}, 1)
        row.update(model_type="ours", split=split)
        rows.append(row)
    return _intervals(_with_ours(published.load(name), rows), runs, all_cols, 1)


def mmmu_table2(runs=None) -> pd.DataFrame:
    return _discipline_table("mmmu_table2", runs, owner("mmmu_table2"))


#: MMMU Tables 4-9: one per discipline, a column per subject (published column -> subject)
MMMU_SUBJECT_TABLES = {
    "mmmu_table4_art_design": "Art and Design", "mmmu_table5_business": "Business",
    "mmmu_table6_science": "Science", "mmmu_table7_health_medicine": "Health and Medicine",
    "mmmu_table8_humanities_social_sci": "Humanities and Social Science",
    "mmmu_table9_tech_engineering": "Tech and Engineering",
}


def _subject_column(subject: str) -> str:
    """``Architecture_and_Engineering`` -> ``architecture_engineering`` (the published CSV's column)."""
    return subject.lower().replace("_and_", "_").replace("laboratory", "lab")


def mmmu_subject_table(name: str, runs=None) -> pd.DataFrame:
    """MMMU Tables 4-9 (one discipline, a column per subject; the papers' subject columns are test
    numbers) plus our MMMU runs: their discipline overall under ``val_overall`` / ``test_overall`` by
    the run's split, each subject from the run's item rows, with 95% Wilson intervals."""

    discipline = MMMU_SUBJECT_TABLES[name]
    task = get_task(owner(name))
    subjects = {_subject_column(task.dimensions[i][0]): task.dimensions[i][0] for i in task.groups[discipline]}
    pub = published.load(name)
    missing = set(subjects) - set(pub.columns)
    if missing:
        raise ValueError(f"{name}: no published column for subject(s) {sorted(missing)}")
    cols = {c: Column(c, field_in("dimension", [s])) for c, s in subjects.items()}  # dimension = subject
    return _with_split_overall(name, runs, owner(name), cols, field_in("group", [discipline]))  # group = discipline


def mmmu_test_leaderboard(runs=None) -> pd.DataFrame:
    """The MMMU test leaderboard (55 entries, ``mmmu_test_leaderboard``) plus our MMMU runs, as Table 2."""
    return _discipline_table("mmmu_test_leaderboard", runs, owner("mmmu_test_leaderboard"))


def seed2plus_table2(runs=None) -> pd.DataFrame:
    """SEED-Bench-2-Plus Table 2 (answer ranking, paper) plus our runs: Charts / Maps / Webs pooled over their
    questions, Average the plain mean of the three (the paper's arithmetic, see the source note)."""
    runs = _as_runs(runs)
    task = get_task(owner("seed2plus_table2"))
    cols = {"average": group("average", task.groups["Overall"], "dim_mean"),
            **{c.lower(): group(c.lower(), task.groups[c]) for c in ("Charts", "Maps", "Webs")}}
    return _intervals(_with_ours(published.load("seed2plus_table2"), _ours_rows(runs, [task.name], cols, 1)), runs, cols, 1)


def cmmmu_table4(runs=None) -> pd.DataFrame:
    return _discipline_table("cmmmu_table4", runs, owner("cmmmu_table4"))


def setting_table(name: str, runs=None) -> pd.DataFrame:
    """A published table with one column per setting (the MMMU-Pro leaderboard) plus our runs of its task: each run
    fills the column of the setting it ran (``Task.table_column``) with its overall accuracy and the one interval."""
    runs = _as_runs(runs)
    task = get_task(owner(name))
    frames = []
    for r in runs:
        if _benchmark(r) != task.name:
            continue
        col = task.table_column(name, r.metrics.get("split") or r.record.get("split"))
        columns = {col: Column(col, every)}
        frames.append(_intervals(pd.DataFrame(_ours_rows([r], [task.name], columns, 1)), [r], columns, 1))
    df = _with_ours(published.load(name), [])
    return pd.concat([df, *frames], ignore_index=True) if frames else df


def mmmu_pro_leaderboard(runs=None) -> pd.DataFrame:
    """The MMMU-Pro leaderboard (``mmmu_pro_leaderboard``) plus our MMMU-Pro runs, each in its setting's column."""
    return setting_table("mmmu_pro_leaderboard", runs)


def _published_with_ours(name: str, runs, benchmark: str, columns: dict[str, Column]) -> pd.DataFrame:
    runs = _as_runs(runs)
    df = _with_ours(published.load(name), _ours_rows(runs, [benchmark], columns, 1))
    if any(_benchmark(r) == benchmark for r in runs):
        df["split"] = [None if s == PAPER else _split(runs, run) for s, run in zip(df["source"], df["run"])]
    return _intervals(df, runs, columns, 1)


def _split(runs: list[Run], run_name) -> str | None:
    for r in runs:
        if r.key == run_name:
            return r.metrics.get("split")
    return None


def mmmu_table3_difficulty(runs=None) -> pd.DataFrame:
    """MMMU Table 3 (Easy / Medium / Hard / Overall, test set) plus our runs (on their own split)."""
    return _published_with_ours("mmmu_table3_difficulty", runs, owner("mmmu_table3_difficulty"), DIFFICULTY_COLUMNS)


def cmmmu_table5_question_type(runs=None) -> pd.DataFrame:
    """CMMMU Table 5 (multiple-choice / fill-in-the-blank / true-or-false / overall) plus our runs."""
    return _published_with_ours("cmmmu_table5_question_type", runs, owner("cmmmu_table5_question_type"),
                                QUESTION_TYPE_COLUMNS)


def cmmmu_table6_difficulty(runs=None) -> pd.DataFrame:
    """CMMMU Table 6 (easy / medium / hard / overall) plus our runs; CMMMU's "middle" is medium."""
    return _published_with_ours("cmmmu_table6_difficulty", runs, owner("cmmmu_table6_difficulty"), DIFFICULTY_COLUMNS)


def mmmu_image_type_table(runs=None) -> pd.DataFrame:
    """MMMU Table 12 (accuracy by image type, test set) with one column per MMMU run of ours
    (``<label>``, plus ``<label> ci_low`` / ``ci_high`` and ``<label> n``, the scored questions; the
    "Test Overall" row holds our overall), computed on the run's own split from its item rows (the
    splits in ``table.attrs["splits"]``)."""
    table = published.load("mmmu_table12_image_types").copy()
    splits = {}
    for r in _as_runs(runs):
        if _benchmark(r) != owner("mmmu_table12_image_types"):
            continue
        columns = {t: Column(t, every if t == "Test Overall" else has_tag("image_type", t)) for t in table["image_type"]}
        items = ours_mod.item_rows(r)
        est = ours_mod.estimate(items, list(columns.values())) if not items.empty else None
        for key, part in (("", "point"), (" ci_low", "low"), (" ci_high", "high")):
            vals = getattr(est, part) if est else {}
            table[r.label + key] = [round(vals.get(t, math.nan), 1) for t in table["image_type"]]
        scored = items[items["status"] == SCORED] if not items.empty else items
        table[r.label + " n"] = pd.array([int(c.select(scored).sum()) if len(scored) else 0 for c in columns.values()],
                                         dtype="Int64")
        splits[r.label] = str(r.metrics.get("split") or "validation")
    table.attrs["splits"] = splits
    return table


def mmmu_image_types(table: pd.DataFrame | None = None, top: int | None = None, runs=None):
    """MMMU Table 12: the published test-set accuracies as a heat-map and our runs (on their own split,
    with 95% intervals and n) in a panel of their own (:func:`mmbench_lib.paper.figures.image_types`).
    ``top`` keeps the most frequent types only."""
    table = mmmu_image_type_table(runs) if table is None else table
    ours = [c for c in table.columns if c.endswith("(ours)")]
    ns = {m: dict(zip(table["image_type"], table[f"{m} n"])) for m in ours if f"{m} n" in table}
    ns = {m: {k: int(v) for k, v in d.items() if pd.notna(v)} for m, d in ns.items()}
    splits = table.attrs.get("splits") or {m: "own" for m in ours}
    return figures.image_types(table.drop(columns=[f"{m} n" for m in ns]), ours, splits, top, ns)


def error_distribution(name: str, title: str | None = None):
    """MMMU Fig. 6 / CMMMU Fig. 4 (GPT-4V error categories) as bars with 95% Wilson intervals."""
    return figures.error_distribution(published.load(name), published.ERROR_SAMPLE_SIZES.get(name), title or name)


# --------------------------------------------------------------------------- our runs against each other
def paired_tests(runs, benchmarks: Sequence[str] | None = None) -> pd.DataFrame:
    """Every pair of our runs on the same benchmark: accuracy of each on their common scored items,
    the difference (b - a) with a 95% paired interval (Newcombe's, from Wilson intervals), and McNemar's exact test
    on the items only one of them got right (:func:`mmbench_lib.core.uncertainty.compare_runs`)."""

    runs = _as_runs(runs)
    rows, notes = [], []
    for bench in dict.fromkeys(_benchmark(r) for r in runs):
        if benchmarks is not None and bench not in benchmarks:
            continue
        group = [r for r in runs if _benchmark(r) == bench]
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                items_a, items_b = (ours_mod.item_rows(r) for r in (a, b))
                if items_a.empty or items_b.empty:
                    continue
                why = unpairable(a, b)  # as `mmbench compare`: a CircularEval rot-1 run is not rot-0's pair
                if why:
                    differ = "; ".join(differences(a.record, b.record))
                    notes.append(f"{a.label} and {b.label} not paired: {why}" + (f" (they differ in {differ})" if differ else ""))
                    continue
                try:
                    res = compare_runs(items_a.to_dict("records"), items_b.to_dict("records"))
                except ValueError:  # no common scored item
                    continue
                rows.append({"benchmark": bench, "run_a": a.label, "run_b": b.label, "n": res["n"],
                             "accuracy_a": res["accuracy_a"], "accuracy_b": res["accuracy_b"],
                             "difference": res["difference"], "ci_low": res["low"], "ci_high": res["high"],
                             "only_a_correct": res["only_a_correct"], "only_b_correct": res["only_b_correct"],
                             "mcnemar_exact_p": res["mcnemar_exact_p"]})
    out = pd.DataFrame(rows, columns=["benchmark", "run_a", "run_b", "n", "accuracy_a", "accuracy_b", "difference",
                                      "ci_low", "ci_high", "only_a_correct", "only_b_correct", "mcnemar_exact_p"])
    out.attrs["notes"] = notes
    return out


paired_differences = figures.paired_differences


# --------------------------------------------------------------------------- saving
def save_table(df: pd.DataFrame, out_dir, name: str, decimals: int = 1) -> list[Path]:
    """:func:`mmbench_lib.analysis.tables.save_table` (CSV + Markdown), the Markdown rewritten at the table's print
    precision with ranks as integers and empty cells blank; an interval (``<c>_ci_low/high`` for a
    value, ``<c>_low/high`` for a rank) is written into its cell as ``value [low, high]`` and
    ``rank [low-high]`` rather than as columns of its own."""
    paths = tables_mod.save_table(df, out_dir, name)
    disp = df.copy()
    companions = {c for c in df.columns if c.endswith(("_ci_low", "_ci_high"))}
    companions |= {c for c in df.columns if c.endswith(("_low", "_high")) and c.rsplit("_", 1)[0] in df.columns}
    for c in disp.columns:
        s = disp[c]
        if c in companions:
            continue
        if f"{c}_ci_low" in df:
            disp[c] = [_with_interval(v, lo, hi, f"{{:.{decimals}f}}", ", ")
                       for v, lo, hi in zip(s, df[f"{c}_ci_low"], df[f"{c}_ci_high"])]
        elif f"{c}_low" in df and (c.endswith("_rank") or c == "rank"):
            disp[c] = [_with_interval(v, lo, hi, "{:.0f}", "-") for v, lo, hi in zip(s, df[f"{c}_low"], df[f"{c}_high"])]
        elif pd.api.types.is_bool_dtype(s) or s.dtype == object or pd.api.types.is_string_dtype(s):
            disp[c] = s.map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
        elif c.endswith("_rank") or c.endswith("_printed") or c == "rank" or c.startswith("n_") or c.endswith(" n") or c in ("n", "dimension_id"):
            disp[c] = [("" if pd.isna(v) else str(int(v))) for v in s]
        elif pd.api.types.is_numeric_dtype(s):
            disp[c] = [("" if pd.isna(v) else f"{float(v):.{decimals}f}") for v in s]
    disp = disp.drop(columns=sorted(companions))
    paths[1].write_text(disp.to_markdown(index=False, disable_numparse=True) + "\n", encoding="utf-8")
    return paths


def _with_interval(v, lo, hi, fmt: str, sep: str) -> str:
    if v is None or pd.isna(v):
        return ""
    text = fmt.format(float(v))
    if lo is not None and hi is not None and not pd.isna(lo) and not pd.isna(hi):
        text += f" [{fmt.format(float(lo))}{sep}{fmt.format(float(hi))}]"
    return text


def save_figure(fig, out_dir, name: str) -> list[Path]:

    paths = plots.save(fig, out_dir, name)
    plt.close(fig)
    return paths


#: figure name -> caption, for the gallery
FIGURES = {
    "seed2_fig5_rank_heatmap": "SEED-Bench-2, Fig. 5: rank heat-map over capability levels (from Table 2)",
    "seed1_fig5_leaderboards": "SEED-Bench v1, Fig. 5: per-dimension leaderboards (ranks 6-18 legible)",
    "seed1_fig6_rank_heatmap": "SEED-Bench v1, Fig. 6: rank heat-map over dimensions",
    "mmmu_table12_image_types": "MMMU, Table 12: accuracy by image type",
    "mmmu_fig6_errors": "MMMU, Fig. 6: GPT-4V error distribution (150 errors)",
    "cmmmu_fig4_errors": "CMMMU, Fig. 4: GPT-4V error distribution (141 errors)",
}
#: figures drawn only when there are two runs of ours on one benchmark
PAIRED_FIGURES = {
    "seed_paired_differences": "Our SEED runs against each other: paired Wilson-based intervals and McNemar tests",
    "mmmu_paired_differences": "Our MMMU / CMMMU runs against each other: paired Wilson-based intervals and McNemar tests",
}


def render_seed(out_dir, runs=None) -> dict[str, list[Path]]:
    """Every SEED table and figure into ``out_dir`` (tables/, figures/)."""
    runs = _as_runs(runs)
    out = {}
    t2 = seed2_table2(runs)
    out["seed2_table2"] = save_table(t2, out_dir, "seed2_table2")
    out["seed2_fig5_rank_heatmap"] = save_figure(seed2_heatmap(t2), out_dir, "seed2_fig5_rank_heatmap")
    out["seed1_table3"] = save_table(seed1_table3(runs), out_dir, "seed1_table3", decimals=2)
    lb = seed1_leaderboard_table(runs)
    out["seed1_fig5_leaderboards_table"] = save_table(lb, out_dir, "seed1_fig5_leaderboards", decimals=2)
    out["seed1_fig5_leaderboards"] = save_figure(seed1_leaderboards(lb), out_dir, "seed1_fig5_leaderboards")
    out["seed1_fig6_rank_heatmap"] = save_figure(seed1_heatmap(runs), out_dir, "seed1_fig6_rank_heatmap")
    out["seed2plus_table2"] = save_table(seed2plus_table2(runs), out_dir, "seed2plus_table2")
    out.update(_paired(out_dir, runs, paper_tasks("seed") + [owner("seed2plus_table2")], "seed"))
    return out


def _paired(out_dir, runs, benchmarks, name) -> dict[str, list[Path]]:
    table = paired_tests(runs, benchmarks)
    if table.empty:
        return {}
    return {f"{name}_paired_tests": save_table(table, out_dir, f"{name}_paired_tests", decimals=2),
            f"{name}_paired_differences": save_figure(paired_differences(table), out_dir, f"{name}_paired_differences")}


def render_mmmu(out_dir, runs=None) -> dict[str, list[Path]]:
    """Every MMMU / CMMMU table and figure into ``out_dir``."""
    runs = _as_runs(runs)
    out = {
        "mmmu_table2": save_table(mmmu_table2(runs), out_dir, "mmmu_table2"),
        "mmmu_test_leaderboard": save_table(mmmu_test_leaderboard(runs), out_dir, "mmmu_test_leaderboard"),
        **{name: save_table(mmmu_subject_table(name, runs), out_dir, name) for name in MMMU_SUBJECT_TABLES},
        "mmmu_table3_difficulty": save_table(mmmu_table3_difficulty(runs), out_dir, "mmmu_table3_difficulty"),
        "mmmu_table12_image_types": save_table(mmmu_image_type_table(runs), out_dir, "mmmu_table12_image_types"),
        "cmmmu_table4": save_table(cmmmu_table4(runs), out_dir, "cmmmu_table4"),
        "cmmmu_table5_question_type": save_table(cmmmu_table5_question_type(runs), out_dir,
                                                 "cmmmu_table5_question_type"),
        "cmmmu_table6_difficulty": save_table(cmmmu_table6_difficulty(runs), out_dir, "cmmmu_table6_difficulty"),
        "mmmu_pro_leaderboard": save_table(mmmu_pro_leaderboard(runs), out_dir, "mmmu_pro_leaderboard"),
    }
    out["mmmu_table12_image_types_fig"] = save_figure(mmmu_image_types(runs=runs), out_dir, "mmmu_table12_image_types")
    out["mmmu_fig6_errors"] = save_figure(
        error_distribution("mmmu_fig6_errors", "MMMU, Fig. 6: GPT-4V error distribution"), out_dir, "mmmu_fig6_errors")
    out["cmmmu_fig4_errors"] = save_figure(
        error_distribution("cmmmu_fig4_errors", "CMMMU, Fig. 4: GPT-4V error distribution"), out_dir,
        "cmmmu_fig4_errors")
    out.update(_paired(out_dir, runs, paper_tasks("mmmu"), "mmmu"))
    return out


def render(papers: str, out_dir, runs=None) -> dict[str, list[Path]]:
    """``papers = "seed"`` (SEED-Bench v1 + SEED-Bench-2) or ``"mmmu"`` (MMMU + CMMMU): every table and
    figure of those papers with ``runs`` as our rows, written under ``out_dir``."""
    renderers = {"seed": render_seed, "mmmu": render_mmmu}
    if papers not in renderers:
        raise ValueError(f"papers must be one of {sorted(renderers)}, got {papers!r}")
    runs = _as_runs(runs)
    for line in placement(papers, runs):
        print(line, flush=True)
    return renderers[papers](out_dir, runs)


#: the published tables each ``papers`` value renders (their owning tasks are the benchmarks it shows)
PAPER_TABLES = {"seed": ("seed2_table2", "seed1_table3", "seed2plus_table2"),
                "mmmu": ("mmmu_table2", "cmmmu_table4", "mmmu_pro_leaderboard")}


def placement(papers: str, runs) -> list[str]:
    """One line for each run that no table or figure of ``papers`` shows, saying why and where it would show."""
    shown = {p: {owner(t) for t in tables} for p, tables in PAPER_TABLES.items()}
    lines = []
    for r in runs:
        if _benchmark(r) in shown[papers]:
            continue
        other = [p for p, benches in shown.items() if _benchmark(r) in benches]
        where = f"papers={other[0]!r} shows it" if other else f"no paper table here shows {_benchmark(r)} runs"
        lines.append(f"{r.key}: a {_benchmark(r)} run, in no table or figure of papers={papers!r} ({where})")
    return lines


def gallery(run_folders: Sequence, dest="docs/figures") -> Path:
    """Copy the PNG figures of ``run_folders`` into ``dest`` and write ``dest/README.md``, one
    markdown image link per figure."""
    dest = manifest.resolve(dest)
    dest.mkdir(parents=True, exist_ok=True)
    lines = ["# Figures", "",
             "The papers' figures rebuilt from the transcribed published results (`mmbench_lib/published/`) by",
             "`make paper` (notebook `40_paper_figures.ipynb`, `papers` seed and mmmu). Red rows and bars are",
             "our runs (here the demo-set runs the notebooks add by default), with the suite's one 95% interval on their",
             "accuracies (Wilson on the effective n, [docs/runs.md](../runs.md#intervals), as `results.json`, `metrics` and",
             "`compare` print it) and a clustered bootstrap interval on their ranks; published rows carry no item-level data,",
             "so they have none.", ""]
    for folder in run_folders:
        for png in sorted((resolve_run(folder) / "figures").glob("*.png")):
            shutil.copy2(png, dest / png.name)
            caption = {**FIGURES, **PAIRED_FIGURES}.get(png.stem, png.stem)
            lines += [f"## {caption}", "", f"![{caption}]({png.name})", ""]
    (dest / "README.md").write_text("\n".join(lines), encoding="utf-8")
    return dest / "README.md"


def main(argv=None) -> None:
    """``python -m mmbench_lib.paper gallery RUN... --dest docs/figures``."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m mmbench_lib.paper")
    ap.add_argument("command", choices=["gallery"])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--dest", default="docs/figures")
    a = ap.parse_args(argv)
    print(gallery(a.runs, a.dest))
