"""Notebook 40's headline (paper.summary.end_report): the report section of its own results.json, one row per run
of ours with its counts and accuracy as numbers, printed under a title naming what was written."""
from mmbench_lib.analysis.results import format_table, read_results
from mmbench_lib.paper import summary
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig


def test_end_report_lists_our_runs_under_what_was_written(demo, tmp_path):
    ours = tmp_path / "seed__random"
    runs.evaluate(RunConfig("seed", ours, data=runs.demo_args("seed", demo), model="random", progress=False))
    out = tmp_path / "paper"
    out.mkdir()
    files = {"seed1_table3": [out / "tables/seed1_table3.csv"], "seed1_fig6": [out / "figures/seed1_fig6.png"]}
    body = summary.end_report(out, "seed", files, [ours])
    saved = read_results(out)
    assert saved["runs"] == [] and saved["report"] == body  # no sub-run of its own: the report is the headline
    assert body["tables"] == ["seed1_table3"] and body["figures"] == ["seed1_fig6"]
    (row,) = body["rows"]
    assert row[:6] == ["seed__random", "seed", "All", "random", "demo data", "ranking"]
    assert isinstance(row[6], int) and isinstance(row[7], float) and row[9:] == [0, 0]
    text = format_table(saved)
    assert text.startswith("Paper tables and figures (seed): 1 tables and 1 figures") and "no finished sub-run" not in text
    empty = summary.end_report(out, "seed", files, [])
    assert empty["rows"] == [] and "no runs of ours" in empty["name"]
