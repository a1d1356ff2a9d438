"""Notebook 40's demo rows (demo.runs.demo_runs) reuse a finished run of the same identity, as the quickstart
leaves it in outputs/, instead of scoring the demo sets again (issue 35); a run of another identity is not used."""
import shutil

from mmbench_lib.analysis import reader
from mmbench_lib.demo import runs as demo_runs_mod
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig


def test_demo_runs_reuse_the_quickstarts_run_of_the_same_identity(demo, outputs, monkeypatch, tmp_path):
    monkeypatch.setattr(demo_runs_mod, "models", lambda task: ["random"])  # the random model only
    data_dir = str(tmp_path / "data")
    paths = demo_runs_mod.ensure_demo(data_dir)
    quick = outputs / "quickstart_x" / "seed2__random"  # notebook 00's config: level L2, seed1-ppl, sum
    settings = runs.model_settings()
    runs.evaluate(RunConfig("seed2", quick, data=runs.demo_args("seed2", paths, level="L2"), model="random",
                            recipe="seed1-ppl", reduction="sum", scorer="shared-prefix", limit=0, seed=0, progress=False,
                            parameters={"model": "random", "benchmark": "seed2"}, **settings))
    (folder,) = demo_runs_mod.demo_runs(["seed2"], data_dir=data_dir)
    assert folder == quick and not (outputs / "demo_runs" / "seed2__random" / "predictions.jsonl").exists()
    # another level (another selection) is another run: made in the demo's own folder
    shutil.rmtree(quick.parent)
    runs.evaluate(RunConfig("seed2", outputs / "q1" / "seed2__random", data=runs.demo_args("seed2", paths, level="L1"),
                            model="random", recipe="seed1-ppl", reduction="sum", progress=False, **settings))
    (folder,) = demo_runs_mod.demo_runs(["seed2"], data_dir=data_dir, run_id="demo_runs_2")
    assert reader.run_key(folder) == "demo_runs_2/seed2__random" and (folder / "predictions.jsonl").is_file()
