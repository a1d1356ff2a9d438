"""mmbench_lib.paper: the papers' tables rebuilt from the published CSVs, ranks, our rows, figures."""
import json

import matplotlib

matplotlib.use("Agg")
import pandas as pd
import pytest

from mmbench_lib import paper
from mmbench_lib import published
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig


def _values_equal(df, name):
    pub = published.load(name)
    got = df[df["source"] == "paper"].reset_index(drop=True)
    for c in pub.columns:
        if c in published.rank_columns(pub):
            c2 = f"{c}_printed" if f"{c}_printed" in got else c
            pd.testing.assert_series_equal(got[c2].astype("Float64"), pub[c].astype("Float64"), check_names=False)
        else:
            pd.testing.assert_series_equal(got[c], pub[c], check_names=False, check_dtype=False)


@pytest.mark.parametrize("fn,name", [
    (paper.seed2_table2, "seed2_table2"), (paper.seed1_table3, "seed1_table3"),
    (paper.mmmu_table2, "mmmu_table2"), (paper.mmmu_table3_difficulty, "mmmu_table3_difficulty"),
    (paper.cmmmu_table4, "cmmmu_table4"), (paper.cmmmu_table5_question_type, "cmmmu_table5_question_type"),
    (paper.cmmmu_table6_difficulty, "cmmmu_table6_difficulty"),
])
def test_tables_copy_published(fn, name):
    _values_equal(fn(), name)


@pytest.mark.parametrize("fn,name", [(paper.seed2_table2, "seed2_table2"), (paper.seed1_table3, "seed1_table3")])
def test_ranks_recomputed(fn, name):
    df = fn()
    for rank_col, value_col in published.RANKS[name].items():
        want = published.competition_rank(df[value_col].tolist())
        got = df[rank_col].astype("Float64").to_numpy(dtype=float, na_value=float("nan"))
        assert [None if w != w else w for w in want] == [None if g != g else g for g in got]


@pytest.fixture(scope="module")
def seed2_run(demo, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "seed2_random"
    runs.evaluate(RunConfig("seed2", out, data=runs.demo_args("seed2", demo, level="L3"), model="random", progress=False))
    return out


def test_our_seed2_row(seed2_run):
    metrics = json.loads((seed2_run / "metrics.json").read_text())
    df = paper.seed2_table2([seed2_run])
    ours = df[df["source"] == "ours"]
    assert len(ours) == 1 and len(df) == len(published.load("seed2_table2")) + 1
    row = ours.iloc[0]
    groups = {g["group"]: g for g in metrics["groups"]}
    assert row["l1_acc"] == pytest.approx(round(100 * groups["L1"]["accuracy_dim_mean"], 1))
    assert row["run"] == paper.run_key(seed2_run) and row["recipe"] == metrics["recipe"]
    assert "(ours)" in row["model"]
    assert row["not_ranked"] == "demo data" and pd.isna(row["l1_rank"])  # a demo run is drawn apart, never ranked
    assert df.loc[df["source"] == "paper", "l1_rank"].tolist() == published.competition_rank(
        df.loc[df["source"] == "paper", "l1_acc"].tolist())
    fig = paper.seed2_heatmap(df)
    assert any("(ours)" in t.get_text() for t in fig.axes[0].get_yticklabels())
    # a seed2 run is not a seed v1 row
    assert (paper.seed1_table3([seed2_run])["source"] == "paper").all()


def test_render_all_headless(tmp_path, seed2_run):
    files = {**paper.render_seed(tmp_path, [seed2_run]), **paper.render_mmmu(tmp_path)}
    figs = [k for k, v in files.items() if str(v[0]).endswith(".png")]
    assert {files[f][0].stem for f in figs} >= set(paper.FIGURES)
    for paths in files.values():
        assert all(p.is_file() and p.stat().st_size > 0 for p in paths)
    for f in figs:
        assert (tmp_path / "figures" / f"{files[f][0].stem}.svg").is_file()
    readme = paper.gallery([tmp_path], tmp_path / "gallery")
    text = readme.read_text()
    assert text.count("![") == len(figs)


def test_make_paper_runs_both_notebooks_and_writes_the_gallery(tmp_path):
    """`make paper` headless on the demo runs (the venv is taken as set up: -o skips reinstalling)."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    repo = Path(__file__).resolve().parents[2]
    venv = Path(sys.prefix)
    env = {**os.environ, "MMBENCH_OUTPUTS": str(tmp_path / "outputs")}
    dest = tmp_path / "gallery"
    proc = subprocess.run(["make", "-o", f"{venv}/.installed", "paper", f"VENV={venv}", f"PAPER_DEST={dest}", "PAPER_ID=paper"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    readme = (dest / "README.md").read_text()
    assert readme.count("![") == len(list(dest.glob("*.png"))) >= len(paper.FIGURES)
    for run in ("paper_seed", "paper_mmmu"):
        folder = tmp_path / "outputs" / run
        assert any(folder.glob("*.ipynb")), run  # the executed notebook beside its tables and figures
        tables = list((folder / "tables").glob("*.md"))
        assert any("(ours)" in t.read_text() for t in tables), run  # the demo runs are our rows


def test_an_l2_run_has_no_l3_value_or_rank(demo, tmp_path):
    """A SEED-2 L2 run (dims 1-24) holds no Part-3 question: Part-3 and L3 are N/A with no rank
    (README, SEED-2 Table 2), not the mean of the dimensions it has; a run missing a level's
    dimension gets no value for that level either."""
    l2 = tmp_path / "seed2_l2"
    runs.evaluate(RunConfig("seed2", l2, data=runs.demo_args("seed2", demo, level="L2"), model="random", progress=False))
    df = paper.seed2_table2([l2])
    row = df[df["source"] == "ours"].iloc[0]
    assert pd.notna(row["l1_acc"]) and pd.notna(row["l2_acc"])
    assert row["not_ranked"] == "demo data" and pd.isna(row["l2_rank"])  # demo data: drawn apart, no rank
    for col in ("part3", "l3"):
        assert pd.isna(row[f"{col}_acc"]) and pd.isna(row[f"{col}_rank"]) and pd.isna(row[f"{col}_rank_low"]), col
    metrics = json.loads((l2 / "metrics.json").read_text())
    l2_group = next(g for g in metrics["groups"] if g["group"] == "L2")
    assert row["l2_acc"] == pytest.approx(round(100 * l2_group["accuracy_dim_mean"], 1))
    fig = paper.seed2_heatmap(df)  # our row: "not ranked" where it has a value, "n/a" in Part-3 and L3
    ours_row = len(df) - 1
    cells = {int(t.get_position()[0]): t.get_text() for t in fig.axes[0].texts  # columns (x in [j, j+1]) of our row
             if ours_row < t.get_position()[1] < ours_row + 1}
    assert cells == {0: "not ranked", 1: "not ranked", 2: "not ranked", 3: "n/a", 4: "n/a"}
    matplotlib.pyplot.close(fig)

    some = tmp_path / "seed2_dims"  # dims 1-3 only: no L1, L2 or L3 average
    runs.evaluate(RunConfig("seed2", some, data=runs.demo_args("seed2", demo, level="L1") | {"dimensions": [1, 2, 3]},
                            model="random", progress=False))
    row = paper.seed2_table2([some]).query("source == 'ours'").iloc[0]
    assert all(pd.isna(row[f"{p}_acc"]) for p in ("l1", "part2", "l2", "part3", "l3"))
