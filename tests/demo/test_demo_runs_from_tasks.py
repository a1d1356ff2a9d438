"""Notebook 40's demo runs come from the tasks (``demo.runs.demo_runs``): every benchmark a ``papers`` value's tables
show gets them, and SEED v1, SEED-2, MMMU and CMMMU get exactly the runs they had when their list was written out
by hand (the same folder and identity: an existing one is reused, never rerun or refused on resume)."""
from pathlib import Path

import pytest

from mmbench_lib import paper
from mmbench_lib.demo import runs as demo_runs_mod
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.tasks.base import get_task


def test_the_benchmarks_notebook_40_draws_are_the_owners_of_its_tables():
    assert paper.shown_benchmarks("seed") == ["seed", "seed2plus", "seed2"]
    assert paper.shown_benchmarks("mmmu") == ["mmmu", "cmmmu", "mmmu-pro"]
    assert paper.shown_benchmarks("mmstar") == ["mmstar"]
    assert demo_runs_mod.models(get_task("mmmu-pro")) == ["random"]  # no validation split: no Frequent Choice
    assert demo_runs_mod.models(get_task("cmmmu")) == ["random", "frequent"]


def _hand_written(bench: str, model: str, data: dict, folder: Path) -> RunSpec:
    """The spec the hand-written demo list made (before the tasks gave it)."""
    params = {"demo": True, "benchmark": bench, "model": model}
    if bench in ("seed", "seed2"):
        return RunSpec.from_params(bench, folder, data=get_task(bench).demo_args(data, level="L2"), model=model,
                                   recipe="seed1-ppl", reduction="sum", scorer="shared-prefix", parameters=params)
    return RunSpec.from_params(bench, folder, source=data[bench]["source" if bench == "mmmu" else "root"], model=model,
                               baseline=model, split="validation" if bench == "mmmu" else "val", parameters=params)


def test_the_four_old_demo_benchmarks_get_the_same_runs(demo, tmp_path, monkeypatch):
    made = []
    monkeypatch.setattr(demo_runs_mod.runs_mod, "evaluate", made.append)  # the specs demo_runs would run
    monkeypatch.setattr(demo_runs_mod, "ensure_demo", lambda _d: demo)
    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path))
    demo_runs_mod.demo_runs(["seed", "seed2", "mmmu", "cmmmu"], reuse=False)
    assert [Path(c.out_dir).name for c in made] == ["seed__smollm2", "seed__random", "seed2__smollm2", "seed2__random",
                                                    "mmmu__random", "mmmu__frequent", "cmmmu__random", "cmmmu__frequent"]
    for new in made:
        bench, model = Path(new.out_dir).name.split("__")
        old = _hand_written(bench, model, demo, Path(new.out_dir))
        assert new.identity() == old.identity() and new.parameters == old.parameters, (bench, model)


@pytest.mark.slow
def test_every_benchmark_of_a_paper_gets_demo_rows(demo_dir, outputs):
    """MMStar (no demo runs before) and MMMU-Pro: real demo runs, shown in their paper's tables, none left out."""
    folders = demo_runs_mod.demo_runs(["mmstar", "mmmu-pro"], data_dir=demo_dir, run_id="d")
    assert [f.name for f in folders] == ["mmstar__smollm2", "mmstar__random", "mmmu-pro__random"]
    assert demo_runs_mod.demo_runs(["mmstar", "mmmu-pro"], data_dir=demo_dir, run_id="d") == folders  # resumed
    for papers, shown in (("mmstar", folders[:2]), ("mmmu", folders[2:])):
        assert not paper.placement(papers, paper._as_runs(shown))  # every run lands in a table of its paper
        files = paper.render(papers, outputs / f"paper_{papers}", shown)
        text = "".join(p[1].read_text() for p in files.values() if str(p[0]).endswith(".csv"))
        assert "(ours)" in text and "demo data" in text, papers
