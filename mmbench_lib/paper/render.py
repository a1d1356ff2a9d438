"""Saving tables (intervals in the cells) and figures, rendering every table and figure of a ``papers`` value, the
one line for a run no table shows, and the docs gallery.

More: docs/modules.md, ``mmbench_lib/paper/render.py``.
"""
from __future__ import annotations

import functools
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
from mmbench_lib.core.outdir import check_out
from mmbench_lib.paper.rows import resolve_run, _as_runs, _benchmark, owner, paper_tasks
from mmbench_lib.paper.tables import (
    seed2_table2,
    seed1_table3,
    seed1_leaderboard_table,
    seed1_leaderboards,
    seed2_heatmap,
    seed1_heatmap,
    mmmu_table2,
    MMMU_SUBJECT_TABLES,
    mmmu_subject_table,
    mmmu_test_leaderboard,
    seed2plus_table2,
    cmmmu_table4,
    mmmu_pro_leaderboard,
    mmmu_table3_difficulty,
    cmmmu_table5_question_type,
    cmmmu_table6_difficulty,
    mmmu_image_type_table,
    mmmu_image_types,
    error_distribution,
    paired_tests,
    paired_differences,
    group_table,
    group_heatmap,
)


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


def render_groups(papers: str, out_dir, runs=None) -> dict[str, list[Path]]:
    """The tables of ``papers`` whose columns are their task's groups (:func:`group_table`; MMStar Tables 3 and 5),
    each with its rank heat-map."""
    runs = _as_runs(runs)
    out = {}
    for name in PAPER_TABLES[papers]:
        table = group_table(name, runs)
        out[name] = save_table(table, out_dir, name)
        title = published.source(name).splitlines()[0].split(": ", 1)[-1].split(" (")[0] + ": rank per column"
        out[f"{name}_rank_heatmap"] = save_figure(group_heatmap(table, title), out_dir, f"{name}_rank_heatmap")
    out.update(_paired(out_dir, runs, sorted({owner(t) for t in PAPER_TABLES[papers]}), papers))
    return out


def render(papers: str, out_dir, runs=None) -> dict[str, list[Path]]:
    """``papers = "seed"`` (SEED-Bench v1 + SEED-Bench-2), ``"mmmu"`` (MMMU + CMMMU) or ``"mmstar"`` (MMStar Tables 3
    and 5): every table and
    figure of those papers with ``runs`` as our rows, written under ``out_dir``."""
    renderers = {"seed": render_seed, "mmmu": render_mmmu}
    renderers.update({p: functools.partial(render_groups, p) for p in PAPER_TABLES if p not in renderers})
    if papers not in renderers:
        raise ValueError(f"papers must be one of {sorted(renderers)}, got {papers!r}")
    runs = _as_runs(runs)
    for line in placement(papers, runs):
        print(line, flush=True)
    return renderers[papers](out_dir, runs)


#: the published tables each ``papers`` value renders (their owning tasks are the benchmarks it shows)
PAPER_TABLES = {"seed": ("seed2_table2", "seed1_table3", "seed2plus_table2"),
                "mmmu": ("mmmu_table2", "cmmmu_table4", "mmmu_pro_leaderboard"),
                "mmstar": ("mmstar_table3", "mmstar_table5")}


def shown_benchmarks(papers: str) -> list[str]:
    """The benchmarks whose runs the tables of ``papers`` show (the tasks owning its ``PAPER_TABLES``), in task order:
    notebook 40 adds their demo runs (``demo.runs.demo_runs``)."""
    owners = {owner(t) for t in PAPER_TABLES[papers]}
    return [t.name for t in all_tasks() if t.name in owners]


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
    markdown image link per figure. A ``dest`` holding a run is refused in one line (``core.outdir``): the gallery
    replaces its own README and figures (``make paper-docs`` refreshes docs/figures), never a run's files."""
    dest = check_out(manifest.resolve(dest), (), "gallery", flag="--dest")
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
    try:
        print(gallery(a.runs, a.dest))
    except ValueError as e:  # a --dest holding a run: one line, nothing written
        ap.exit(2, f"mmbench: error: {e}\n")
