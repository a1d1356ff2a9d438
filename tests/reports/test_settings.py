"""Notebook 21's table and chart (reports/settings.py): each run's accuracy with the one 95% interval, a run on demo
data labelled "not ranked" as the heat-maps label it, and each setting's own chance line (1 in 4, 1 in 10)."""
import matplotlib
import pytest

from mmbench_lib.core.uncertainty import proportion_interval
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.reports import settings
from mmbench_lib.tasks.base import get_task


@pytest.fixture(scope="module")
def files(demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("settings")
    task = get_task("mmmu-pro")
    for split in ("standard4-direct", "standard10-direct"):
        data = {k: v for k, v in task.demo_args(demo, split=split).items() if k != "split"}
        runs.evaluate(RunSpec.from_params(task.name, root / split, data=data, split=split, model="random",
                                          baseline="random", progress=False))
    return task, sorted(root.glob("*/official/*.jsonl"))


def test_the_table_carries_the_one_interval_chance_and_the_not_ranked_flag(files):
    task, found = files
    table = settings.settings_table(task, found, fallback_seeds=3).set_index("setting")
    for st, row in table.iterrows():
        lo, hi = proportion_interval(row["accuracy"] / 100 * row["n"], row["n"])
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((100 * lo, 100 * hi))
        assert row["not_ranked"] == "demo data"
    assert table.loc["standard4", "chance"] == pytest.approx(25.0)  # four options each
    assert table.loc["standard10", "chance"] > table.loc["standard4", "chance"] / 2.5  # up to ten (demo: some fewer)


def test_the_chart_draws_intervals_flags_and_a_chance_line_per_setting(files):
    task, found = files
    table = settings.settings_table(task, found, fallback_seeds=3)
    fig = settings.settings_figure(task, table, ["GPT-4o (0513)"])
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sum("[not ranked: demo data]" in x for x in labels) == 2 and any("leaderboard" in x for x in labels)
    chance = [c for c in ax.collections if isinstance(c, matplotlib.collections.LineCollection)
              and c.get_linestyle()[0][1] is not None]  # the dotted chance segments
    ys = sorted({round(float(seg[0][1]), 3) for c in chance for seg in c.get_segments()})
    assert 25.0 in ys and len(ys) == 2  # one per setting with our runs, not one line across every group
    assert "95% Wilson intervals" in ax.get_title()
    matplotlib.pyplot.close(fig)
