"""A baseline that learns from a split (Frequent Choice) on a task without a validation split (MMMU-Pro: one
hub split, its settings the same questions) would count the gold of the items it is scored on: the task
declares ``validation_split = None`` and the baseline is refused before the run, in one line."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.baselines import BASELINES, LEARNS_FROM_SPLIT, refusal
from mmbench_lib.pipeline.config import RunConfig
from mmbench_lib.pipeline.preflight import BadValue, check_values
from mmbench_lib.tasks.base import all_tasks, get_task

ROOT = Path(__file__).resolve().parents[2]


def test_refusal_follows_the_task_contract():
    for task in all_tasks(protocol="generation"):
        for b in BASELINES:
            why = refusal(task.name, b)
            assert (why is not None) == (b in LEARNS_FROM_SPLIT and task.validation_split is None), (task.name, b)
    assert get_task("mmmu-pro").validation_split is None
    assert refusal("mmmu", "frequent") is None and refusal("cmmmu", "frequent") is None
    why = refusal("mmmu_pro", "frequent")
    assert "\n" not in why and "MMMU-Pro" in why and "gold" in why and "random, none or ocr" in why


def test_preflight_refuses_frequent_on_mmmu_pro_only():
    with pytest.raises(BadValue) as e:
        check_values({"benchmark": "mmmu-pro", "baseline": "frequent"}, "generation")
    assert e.value.name == "baseline" and "Frequent Choice" in str(e.value)
    check_values({"benchmark": "mmmu-pro", "baseline": "random"}, "generation")
    check_values({"benchmark": "mmmu-pro", "baseline": "all", "model": "smollm2"}, "generation")
    check_values({"benchmark": "mmmu", "baseline": "frequent"}, "generation")


def test_cli_refuses_before_any_folder(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MMBENCH_OUTPUTS": str(tmp_path / "outputs"), "HF_HUB_OFFLINE": "1"}
    env.pop("MMBENCH_DEBUG", None)
    proc = subprocess.run([sys.executable, "-m", "mmbench_lib.cli", "run", "notebooks/20_generation.ipynb",
                           "-p", "benchmark", "mmmu-pro", "-p", "baseline", "frequent"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("mmbench: error:")]
    assert proc.returncode == 2 and len(errors) == 1, proc.stderr
    assert "baseline" in errors[0] and "would count their gold answers" in errors[0]
    assert not (tmp_path / "outputs").exists()


def test_run_refuses_and_all_skips_it(demo, tmp_path, capsys):
    source = demo["mmmu-pro"]["source"]
    one = RunConfig("mmmu-pro", tmp_path / "f", source=source, model="smollm2", baseline="frequent",
                    split="standard10-direct")
    with pytest.raises(ValueError, match="Frequent Choice learns answers from a validation split"):
        runs.evaluate(one)
    assert not (tmp_path / "f").exists()
    config = RunConfig("mmmu-pro", tmp_path / "all", source=source, model="smollm2", baseline="random",
                       split="standard10-direct", progress=False)
    results = runs.evaluate_baselines(config, ("random", "frequent"))
    assert list(results) == ["random"] and results["random"]["overall"]["n"] > 0
    assert "skipped frequent: Frequent Choice" in capsys.readouterr().out
    assert not (tmp_path / "all" / "frequent").exists()
