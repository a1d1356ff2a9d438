"""The papers' tables, heat-maps and paired tests with our runs as rows (SEED-Bench v1/2, SEED-Bench-2-Plus,
MMMU, CMMMU, the MMMU-Pro leaderboard).

More: docs/modules.md, ``mmbench_lib/paper/tables.py``.
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
from mmbench_lib.paper.rows import (
    PAPER,
    OURS,
    SEED2_LEVELS,
    SEED1_GROUPS,
    MMMU_DISCIPLINES,
    DIFFICULTY_COLUMNS,
    QUESTION_TYPE_COLUMNS,
    seed2_columns,
    seed1_columns,
    _as_runs,
    _benchmark,
    owner,
    _ours_rows,
    _with_ours,
    _intervals,
    _rerank,
)


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


def group_table(name: str, runs=None, decimals: int = 1) -> pd.DataFrame:
    """A published table whose columns are its task's groups (``Task.table_groups``: MMStar Tables 3 and 5) plus our
    runs of that task: each column pooled over its group's questions, with the one interval."""
    runs = _as_runs(runs)
    task = get_task(owner(name))
    cols = {c: group(c, task.groups[g]) for c, g in task.table_groups.items()}
    return _intervals(_with_ours(published.load(name), _ours_rows(runs, [task.name], cols, decimals)), runs, cols, decimals)


def group_heatmap(table: pd.DataFrame, title: str):
    """Rank heat-map of a :func:`group_table`: the published rows ranked per column (competition ranking on the
    printed values), our rows that are not comparable drawn apart, unranked."""
    cols = [c for c in table.columns if c.endswith("_ci_low")]
    cols = [c[: -len("_ci_low")] for c in cols] or [c for c in table.columns if c not in ("model", "source")]
    unranked = table["not_ranked"].fillna("").astype(str) if "not_ranked" in table else pd.Series([""] * len(table))
    names = table["model"].astype(str)
    if "params" in table:  # the same model at two sizes (LLaVA-1.5 7B / 13B): its size in the label
        size = table["params"].fillna("").astype(str).str.strip()
        names = names.where(~names.duplicated(keep=False) | size.eq(""), names + " (" + size + ")")
    ranks = pd.DataFrame({"model": names, "source": table["source"]})
    keep = unranked.eq("").to_numpy()
    for c in cols:
        vals = table[c].astype(float).where(keep)
        order = published.competition_rank([v for v in vals if not math.isnan(v)])
        it = iter(order)
        ranks[c.upper()] = [math.nan if math.isnan(v) else next(it) for v in vals]
    present = pd.DataFrame({c.upper(): table[c].notna().to_numpy() for c in cols}, index=table.index)
    return rank_heatmap(ranks, [c.upper() for c in cols], ranks_given=True, unranked=unranked, present=present,
                        title=title, note="Ranks among the published rows per column; our rows that are not "
                                          "comparable (demo data, a subset, random weights) are drawn apart.")


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
