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
    assert row[:6] == ["seed__random", "seed", "All", "random", "demo data", "ranking (seed1-ppl, sum)"]
    assert row[6] == "" and isinstance(row[7], int) and isinstance(row[8], float) and row[10:] == [0, 0, "-"]  # failed, n/a, truncated (ranking: none)
    text = format_table(saved)
    assert text.startswith("Paper tables and figures (seed): 1 tables and 1 figures") and "no finished sub-run" not in text
    empty = summary.end_report(out, "seed", files, [])
    assert empty["rows"] == [] and "no runs of ours" in empty["name"]


def test_end_report_reads_runs_given_as_run_ids(demo, outputs):
    """The docs' form: a run id under outputs/ (issue 35: the closing table said '<id>: no such run folder')."""
    runs.evaluate(RunConfig("seed", outputs / "myrun" / "seed__random", data=runs.demo_args("seed", demo),
                            model="random", limit=5, progress=False))
    out = outputs / "paper"
    out.mkdir()
    body = summary.end_report(out, "seed", {"t": [out / "t.csv"]}, ["myrun", "myrun/seed__random"])
    assert [r[0] for r in body["rows"]] == ["seed__random", "seed__random"] and all(r[7] == 5 for r in body["rows"])
