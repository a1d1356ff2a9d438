"""Notebook 40 reads every task's runs (issue 38 item 3): a run's top folder and run ids as `compare` takes them,
MMMU-Pro runs in the leaderboard table (each in its setting's column), a CircularEval rotation never paired with
rotation 0, and one line for a run no table of the chosen papers shows."""
import pytest

from mmbench_lib import paper
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.tasks.base import get_task


@pytest.fixture(scope="module")
def top(demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("every_run") / "top"
    pro = get_task("mmmu-pro")
    for split in ("standard4-direct", "standard10-direct"):
        data = pro.demo_args(demo, split=split)
        runs.evaluate(RunSpec.from_params("mmmu-pro", root / split, data={k: v for k, v in data.items() if k != "split"},
                                          split=split, model="random", baseline="random", progress=False))
    seed = runs.demo_args("seed2", demo)
    for rot in (0, 1):
        runs.evaluate(RunSpec.from_params("seed2", root / f"seed2_rot{rot}", data=seed, model="random", rotation=rot,
                                          progress=False))
    return root


def test_a_top_folder_is_its_sub_runs_and_mmmu_pro_reaches_the_leaderboard(top):
    assert sorted(p.name for p in paper.expand([top])) == ["seed2_rot0", "seed2_rot1", "standard10-direct",
                                                          "standard4-direct"]
    table = paper.mmmu_pro_leaderboard([top])
    ours = table[table["source"] == "ours"].set_index("run")
    four, ten = (ours.loc[str(top / s)] for s in ("standard4-direct", "standard10-direct"))
    assert "standard4-direct" in four["model"] and "standard10-direct" in ten["model"]  # never identical rows
    assert four["standard_4"] >= 0 and four["standard_4_ci_low"] < four["standard_4_ci_high"]
    assert ten["standard_10"] >= 0 and ten["standard_10_ci_low"] < ten["standard_10_ci_high"]
    assert all(str(ours.loc[str(top / s), "standard_10"]) == "nan" for s in ("standard4-direct",))


def test_a_rotation_is_labelled_and_not_paired_with_rotation_0(top):
    tests = paper.paired_tests([top / "seed2_rot0", top / "seed2_rot1"])
    assert tests.empty
    (note,) = tests.attrs["notes"]
    assert "rot-1" in note and "not paired" in note and "rotation: 0 vs 1" in note


def test_a_run_no_table_shows_gets_one_line(top):
    lines = paper.placement("seed", paper._as_runs([top]))
    assert len(lines) == 2 and all("a mmmu-pro run, in no table or figure of papers='seed'" in x for x in lines)
    assert all("papers='mmmu' shows it" in x for x in lines)
    assert paper.placement("mmmu", paper._as_runs([top / "standard4-direct"])) == []
