"""Our runs beside the papers' rows: values recomputed from item rows, bootstrap and rank intervals.

Worked examples first (the bootstrap keeps a cluster's questions together, N/A spreads, the rank
of a draw is a competition rank at print precision), then real demo runs of every benchmark
(SmolLM2 and Random Choice ranking SEED v1 / SEED-2, the Random and Frequent Choice baselines
answering MMMU / CMMMU) through every table and figure that takes our rows.
"""
import json
import math
import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest

from mmbench_lib.core.uncertainty import wilson_interval

from mmbench_lib import published
from mmbench_lib.paper import ours
from mmbench_lib import paper
from mmbench_lib.demo.runs import demo_runs as demo_runs_
from mmbench_lib.paper.ours import Column, dims, every


def _rows(spec):
    return pd.DataFrame([{"id": f"q{i}", "dimension_id": d, "cluster": c, "correct": float(k), "status": s}
                         for i, (d, c, k, s) in enumerate(spec)])


def test_micro_and_dimension_mean_on_a_worked_example():
    rows = _rows([(1, "A", 1, "ok"), (1, "A", 1, "ok"), (2, "B", 0, "ok"), (2, "C", 0, "ok"), (2, "D", 1, "ok"),
                  (3, "E", 1, "failed")])
    est = ours.estimate(rows, [Column("micro", every), Column("dmean", every, "dim_mean"), Column("d2", dims([2]))])
    assert est.point["micro"] == pytest.approx(60.0)  # 3 of 5 scored questions; the failed one left out
    assert est.point["dmean"] == pytest.approx((100.0 + 100.0 / 3) / 2)
    assert est.point["d2"] == pytest.approx(100.0 / 3)
    assert est.clusters == 4 and est.n == 5
    for name in est.point:
        assert est.low[name] <= est.point[name] <= est.high[name]


def test_the_bootstrap_resamples_clusters_not_questions():
    # two images with two questions each: all right on one, all wrong on the other
    rows = _rows([(1, "A", 1, "ok"), (1, "A", 1, "ok"), (1, "B", 0, "ok"), (1, "B", 0, "ok")])
    est = ours.estimate(rows, [Column("acc", every)], n_resamples=500)
    assert set(np.unique(est.draws["acc"])) <= {0.0, 50.0, 100.0}  # never 25 or 75: questions stay together
    # the interval of this proportion is the one rule: Wilson on the effective n, here the 2 images (deff = 4 -> n/deff = 1,
    # floored at the number of clusters): Wilson 1/2 = [9.5, 90.5]
    lo, hi = wilson_interval(1, 2)
    assert (est.low["acc"], est.high["acc"]) == pytest.approx((100 * lo, 100 * hi))
    assert (100 * lo, 100 * hi) == pytest.approx((9.45, 90.55), abs=0.01)


def test_a_column_with_an_na_question_is_na():
    rows = _rows([(1, "A", 1, "ok"), (25, "B", 0, "n/a")])
    est = ours.estimate(rows, [Column("all", every), Column("d1", dims([1]))])
    assert math.isnan(est.point["all"]) and math.isnan(est.low["all"])
    assert est.point["d1"] == 100.0


def test_rank_interval_is_a_competition_rank_at_print_precision():
    lo, hi = ours.rank_interval(np.array([50.0, 60.0, 70.0] * 10), [55.0, 65.0, 80.0])
    assert (lo, hi) == (2.0, 4.0)
    # 64.96 prints as 65.0: a tie with 65.0 shares rank 2 (one row above: 80)
    assert ours.rank_interval(np.array([64.96] * 5), [65.0, 80.0], decimals=1) == (2.0, 2.0)
    assert ours.rank_interval(np.array([64.96] * 5), [65.0, 80.0]) == (3.0, 3.0)
    assert all(math.isnan(v) for v in ours.rank_interval(np.array([math.nan]), [1.0]))


# --------------------------------------------------------------------------- real demo runs
@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper_runs")
    folders = demo_runs_(["seed", "seed2", "mmmu", "cmmmu"], data_dir=root / "data", run_id=str(root / "runs"))
    return {f.name: f for f in folders}


def _metrics(folder):
    return json.loads((folder / "metrics.json").read_text())


def test_item_rows_give_back_the_metrics_of_every_run(demo_runs):
    for name, folder in demo_runs.items():
        run = paper.load_run(folder)
        m = _metrics(folder)
        if name.startswith("seed"):
            groups = {g["group"]: g for g in m["groups"]}
            from mmbench_lib.tasks import seed1, seed2

            table = seed1.GROUPS if name.startswith("seed__") else seed2.GROUPS
            cols = {g: Column(g, dims(ids)) for g, ids in table.items()}
            cols.update({f"{g} dm": Column(f"{g} dm", dims(ids), "dim_mean") for g, ids in table.items()})
            got = ours.point_values(run, cols)
            for g in table:
                if g not in groups:  # a group outside the run's level (SEED-2 at L2: no Part-3, no L3)
                    continue
                want_micro, want_dm = groups[g]["accuracy_micro"], groups[g]["accuracy_dim_mean"]  # fractions
                assert (got[g] == pytest.approx(100 * want_micro)) if want_micro is not None else math.isnan(got[g]), g
                assert (got[f"{g} dm"] == pytest.approx(100 * want_dm)) if want_dm is not None else math.isnan(got[f"{g} dm"])
        else:
            got = ours.point_values(run, paper.DIFFICULTY_COLUMNS)
            assert got["overall"] == pytest.approx(100 * m["overall"]["accuracy"])
            lo, hi = 100 * m["overall"]["ci_low"], 100 * m["overall"]["ci_high"]
            assert lo <= got["overall"] <= hi
            for level, col in (("easy", "easy"), ("hard", "hard")):
                key = next(k for k in m["per_difficulty"] if k.lower() == level)
                assert got[col] == pytest.approx(100 * m["per_difficulty"][key]["accuracy"])
                assert m["per_difficulty"][key]["ci_low"] <= m["per_difficulty"][key]["accuracy"] <= m["per_difficulty"][key]["ci_high"]


def _ours(df):
    rows = df[df["source"] == "ours"]
    assert len(rows) == 2
    return rows


@pytest.mark.parametrize("fn,name,decimals", [(paper.seed2_table2, "seed2_table2", 1),
                                              (paper.seed1_table3, "seed1_table3", 2)])
def test_seed_tables_rank_our_rows_with_intervals(demo_runs, fn, name, decimals):
    df = fn(list(demo_runs.values()))
    assert len(df) == len(published.load(name)) + 2
    for _, row in _ours(df).iterrows():
        assert "demo data" in row["model"] and row["recipe"] == "seed1-ppl"
        assert row["not_ranked"] == "demo data"  # drawn apart: demo data is not the papers' full split
        for rank_col, value_col in published.RANKS[name].items():
            assert pd.isna(row[rank_col]) and pd.isna(row[f"{rank_col}_low"])  # no rank, no rank interval
            if pd.isna(row[value_col]):
                continue
            assert row[f"{value_col}_ci_low"] <= row[value_col] + 10 ** -decimals <= row[f"{value_col}_ci_high"] + 2 * 10 ** -decimals
    paper_rows = df[df["source"] == "paper"]
    assert paper_rows[[c for c in df.columns if c.endswith(("_ci_low", "_rank_low"))]].isna().all().all()
    for rank_col, value_col in published.RANKS[name].items():  # ranks recomputed over the comparable rows only
        want = published.competition_rank([v if s == "paper" else math.nan for v, s in zip(df[value_col], df["source"])])
        got = df[rank_col].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
        assert [None if w != w else w for w in want] == [None if g != g else g for g in got]


def test_seed2_part3_is_empty_for_text_models(demo_runs):
    df = paper.seed2_table2([demo_runs["seed2__smollm2"]])
    row = df[df["source"] == "ours"].iloc[0]
    assert not pd.isna(row["l2_acc"]) and pd.isna(row["part3_acc"]) and pd.isna(row["l3_acc"])
    assert pd.isna(row["l3_rank"]) and pd.isna(row["l3_rank_low"])


def test_heatmaps_draw_demo_runs_apart_unranked(demo_runs):
    """Demo-data runs are drawn apart, hatched, "not ranked" with their reason: never a rank among the papers' rows
    (issue 35: a random-weight demo run ranked #1), and no degenerate rank interval."""
    runs = list(demo_runs.values())
    for fig in (paper.seed2_heatmap(paper.seed2_table2(runs)), paper.seed1_heatmap(runs)):
        texts = [t.get_text() for t in fig.axes[0].texts]
        assert not any(t.startswith("[") for t in texts) and texts.count("not ranked") >= 2 * 3
        labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        assert sum("not ranked: demo data" in t for t in labels) == 2
        legend = " ".join(t.get_text() for leg in fig.legends for t in leg.get_texts())
        assert "not comparable with the papers' full-split results" in legend
        matplotlib.pyplot.close(fig)


def test_a_comparable_run_is_ranked_with_its_interval(demo, tmp_path, monkeypatch):
    """A full split (the task's declared size; here the demo questions copied out of the demo folder and declared
    so) by a real model (Random Choice) is ranked among the papers' rows, with its 95% rank interval."""
    from mmbench_lib.pipeline import runs as runs_lib
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.tasks.base import get_task
    own = tmp_path / "seed_copy"
    shutil.copytree(Path(demo["seed"]["annotation_file"]).parent, own)
    args = {**runs_lib.demo_args("seed", demo), "annotation_file": str(own / "SEED-Bench.json"), "image_root": str(own / "cc3m")}
    args["video_roots"] = {k: str(own / "videos" / k) for k in args.get("video_roots") or {}}
    n = len(json.loads((own / "SEED-Bench.json").read_text())["questions"])
    monkeypatch.setattr(type(get_task("seed")), "split_sizes", {"test": n})
    run = tmp_path / "full"
    runs_lib.evaluate(RunConfig("seed", run, data=args, model="random", progress=False))
    t3 = paper.seed1_table3([run])
    row = t3[t3["source"] == "ours"].iloc[0]
    assert row["not_ranked"] == "" and not pd.isna(row["overall_rank"])
    assert row["overall_rank_low"] <= row["overall_rank"] <= row["overall_rank_high"]
    fig = paper.seed1_heatmap([run])
    assert any(t.get_text().startswith("[") for t in fig.axes[0].texts)
    foot = " ".join(t.get_text() for t in fig.texts)
    assert "bootstrap interval of their rank" in foot and "no item-level data" in foot
    matplotlib.pyplot.close(fig)


@pytest.mark.parametrize("fn,bench,cols", [
    (paper.mmmu_table2, "mmmu", ["val_overall", "science", "tech_engineering"]),
    (paper.mmmu_table3_difficulty, "mmmu", ["easy", "medium", "hard", "overall"]),
    (paper.cmmmu_table4, "cmmmu", ["val_overall", "science"]),
    (paper.cmmmu_table5_question_type, "cmmmu", ["multiple_choice", "fill_in_the_blank", "true_or_false", "overall"]),
    (paper.cmmmu_table6_difficulty, "cmmmu", ["easy", "medium", "hard", "overall"]),
])
def test_mmmu_and_cmmmu_tables_take_generated_runs(demo_runs, fn, bench, cols):
    df = fn(list(demo_runs.values()))
    rows = _ours(df)
    for _, row in rows.iterrows():
        m = _metrics(demo_runs[Path(row["run"]).name])
        assert row["split"] == m["split"] and f"[generation (official), {m['split']}, demo data]" in row["model"]
        overall = next(c for c in cols if c.endswith("overall"))
        assert row[overall] == pytest.approx(round(100 * m["overall"]["accuracy"], 1))
        for c in cols:
            assert not pd.isna(row[c]), c  # every column computed from the run's item rows
            assert row[f"{c}_ci_low"] - 0.05 <= row[c] <= row[f"{c}_ci_high"] + 0.05
    if "easy" in cols:  # CMMMU calls it "middle", MMMU "Medium": both land in the medium column
        m = _metrics(demo_runs[Path(rows.iloc[0]["run"]).name])
        key = next(k for k in m["per_difficulty"] if k.lower() in ("medium", "middle"))
        assert rows.iloc[0]["medium"] == pytest.approx(round(100 * m["per_difficulty"][key]["accuracy"], 1))
    if "true_or_false" in cols:
        m = _metrics(demo_runs[Path(rows.iloc[0]["run"]).name])
        assert rows.iloc[0]["true_or_false"] == pytest.approx(round(100 * m["per_question_type"]["true-false"]["accuracy"], 1))


def test_image_type_table_and_chart_take_our_mmmu_runs(demo_runs):
    runs = list(demo_runs.values())
    table = paper.mmmu_image_type_table(runs)
    ours_cols = [c for c in table.columns if c.endswith("(ours)")]
    assert len(ours_cols) == 2
    m = _metrics(demo_runs["mmmu__frequent"])
    col = next(c for c in ours_cols if c.startswith("frequent"))
    by_type = table.set_index("image_type")[col]
    assert by_type["Test Overall"] == pytest.approx(round(100 * m["overall"]["accuracy"], 1))
    for kind, v in m["per_image_type"].items():
        if kind in by_type.index:
            assert by_type[kind] == pytest.approx(round(100 * v["accuracy"], 1))
    fig = paper.mmmu_image_types(table)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels[:2] == ours_cols or set(labels[:2]) == set(ours_cols)  # ours drawn first
    assert "95% Wilson intervals" in " ".join(t.get_text() for t in fig.texts)  # the one interval rule
    matplotlib.pyplot.close(fig)


def test_markdown_tables_write_intervals_into_the_cells(demo_runs, tmp_path):
    df = paper.seed2_table2(list(demo_runs.values()))
    csv, md = paper.save_table(df, tmp_path, "seed2_table2")
    text = md.read_text()
    ours_lines = [line for line in text.splitlines() if "(ours)" in line]
    assert len(ours_lines) == 2 and all("[" in line and "]" in line for line in ours_lines)
    assert "_ci_low" not in text.splitlines()[0]  # folded into the cells, not columns of their own
    assert "l1_acc_ci_low" in pd.read_csv(csv).columns  # the CSV keeps them as numbers


def test_render_with_our_runs(demo_runs, tmp_path):
    runs = list(demo_runs.values())
    files = {**paper.render_seed(tmp_path, runs), **paper.render_mmmu(tmp_path, runs)}
    for name, paths in files.items():
        assert all(p.is_file() and p.stat().st_size > 0 for p in paths), name
    for name in ("seed2_table2", "seed1_table3", "mmmu_table2", "cmmmu_table5_question_type", "mmmu_table12_image_types"):
        assert "(ours)" in files[name][1].read_text(), name


def test_paired_tests_between_our_runs(demo_runs, tmp_path):
    from scipy import stats

    from mmbench_lib.core.uncertainty import compare_runs

    table = paper.paired_tests(list(demo_runs.values()))
    assert sorted(table["benchmark"]) == ["cmmmu", "mmmu", "seed", "seed2"]  # one pair per benchmark, none across
    row = table[table["benchmark"] == "mmmu"].iloc[0]
    first = "random" if row["run_a"].startswith("random") else "frequent"
    a, b = demo_runs[f"mmmu__{first}"], demo_runs[f"mmmu__{'frequent' if first == 'random' else 'random'}"]
    direct = compare_runs(ours.item_rows(a).to_dict("records"), ours.item_rows(b).to_dict("records"))
    assert row["difference"] == pytest.approx(direct["difference"]) and row["n"] == 24
    assert row["ci_low"] <= row["difference"] <= row["ci_high"]
    k, n = int(row["only_b_correct"]), int(row["only_a_correct"] + row["only_b_correct"])
    assert row["mcnemar_exact_p"] == pytest.approx(stats.binomtest(k, n, 0.5).pvalue)
    assert row["difference"] == pytest.approx(row["accuracy_b"] - row["accuracy_a"])
    fig = paper.paired_differences(table)
    assert len(fig.axes[0].get_yticklabels()) == 4
    matplotlib.pyplot.close(fig)
    files = paper.render_seed(tmp_path, [demo_runs["seed__random"], demo_runs["seed__smollm2"]])
    assert files["seed_paired_tests"][0].is_file() and files["seed_paired_differences"][0].is_file()
    assert "seed_paired_tests" not in paper.render_seed(tmp_path / "one", [demo_runs["seed__random"]])


def test_leaderboards_carry_our_per_dimension_intervals(demo_runs):
    table = paper.seed1_leaderboard_table([demo_runs["seed__smollm2"]])
    mine = table[table["origin"] == "ours"]
    assert len(mine) == 12 and mine["rank"].isna().all()
    assert ((mine["accuracy_ci_low"] <= mine["accuracy"] + 0.01) & (mine["accuracy"] <= mine["accuracy_ci_high"] + 0.01)).all()
    assert table.loc[table["origin"] != "ours", "accuracy_ci_low"].isna().all()


@pytest.mark.parametrize("name", list(paper.MMMU_SUBJECT_TABLES))
def test_mmmu_subject_tables_copy_the_paper_and_add_our_subjects(demo_runs, name):
    df = paper.mmmu_subject_table(name, list(demo_runs.values()))
    pub = published.load(name)
    got = df[df["source"] == "paper"].reset_index(drop=True)
    for c in pub.columns:
        pd.testing.assert_series_equal(got[c], pub[c], check_names=False, check_dtype=False)
    for _, row in _ours(df).iterrows():
        m = _metrics(demo_runs[Path(row["run"]).name])
        discipline = paper.MMMU_SUBJECT_TABLES[name]
        assert row["val_overall"] == pytest.approx(round(100 * m["per_discipline"][discipline]["accuracy"], 1))
        for subject, v in m["per_subject"].items():
            col = paper._subject_column(subject)
            if col in df.columns:
                assert row[col] == pytest.approx(round(100 * v["accuracy"], 1)), subject


def test_runs_with_the_same_folder_name_in_two_run_ids_stay_apart(demo_runs, tmp_path):
    # the same sub-run name under two run ids: an edited copy must not borrow the original's items
    copy = tmp_path / "other_run_id" / "seed2__random"
    shutil.copytree(demo_runs["seed2__random"], copy)
    rows = [json.loads(line) for line in (copy / "predictions.jsonl").read_text().splitlines()]
    for r in rows:
        r["correct"] = r["status"] == "ok"  # this copy answers everything right
    (copy / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    df = paper.seed2_table2([demo_runs["seed2__random"], copy])
    mine = df[df["source"] == "ours"]
    assert len(set(mine["run"])) == 2 and len(set(mine["model"])) == 2  # labels told apart by their paths
    by_run = mine.set_index("run")
    # l1_acc is a mean of dimension accuracies (Table 2): the one rule (a weighted proportion), never zero-width at n/n
    assert by_run.loc[str(copy), "l1_acc"] == 100.0 and by_run.loc[str(copy), "l1_acc_ci_high"] == 100.0
    assert by_run.loc[str(copy), "l1_acc_ci_low"] < 100.0
    other = by_run.drop(index=str(copy)).iloc[0]
    assert other["l1_acc"] < 100.0 and other["l1_acc_ci_high"] < 100.0 + 1e-9
