"""SEED-Bench-2-Plus Table 2 and the MMMU test leaderboard in the paper renderers (notebook 40) with our runs."""
import pytest

from mmbench_lib import paper
from mmbench_lib.demo import ensure_demo
from mmbench_lib.paper import ours
from mmbench_lib.pipeline import runs as runs_mod
from mmbench_lib.pipeline.config import RunConfig


@pytest.fixture(scope="module")
def plus_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("plus")
    data = ensure_demo(root / "demo")
    folder = root / "seed2plus__random"
    runs_mod.evaluate(RunConfig("seed2plus", folder, data=runs_mod.demo_args("seed2plus", data), model="random",
                                parameters={"demo": True}, progress=False))
    return folder


def test_seed2plus_table2_with_our_run(plus_run):
    df = paper.seed2plus_table2([plus_run])
    assert (df["source"] == "paper").sum() == 34
    row = df[df["source"] == "ours"].iloc[0]
    rows = ours.item_rows(paper.load_run(plus_run))
    cats = []
    for name, dim in (("charts", 1), ("maps", 2), ("webs", 3)):
        sub = rows[rows["dimension_id"] == dim]
        acc = 100 * sub["correct"].mean()
        assert row[name] == pytest.approx(round(acc, 1)) and row[f"{name}_ci_low"] <= acc <= row[f"{name}_ci_high"]
        cats.append(acc)
    assert row["average"] == pytest.approx(round(sum(cats) / 3, 1))  # the plain mean, as the paper's Average


def test_mmmu_test_leaderboard_and_both_tables_are_rendered(plus_run, tmp_path):
    df = paper.mmmu_test_leaderboard()
    assert len(df) == 55 and (df["source"] == "paper").all()
    files = {**paper.render_seed(tmp_path, [plus_run]), **paper.render_mmmu(tmp_path)}
    assert "(ours)" in files["seed2plus_table2"][1].read_text()
    assert "InternVL2.5-78B" in files["mmmu_test_leaderboard"][1].read_text()
