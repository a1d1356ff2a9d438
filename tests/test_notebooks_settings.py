"""Real papermill runs (issue 35, item 8): notebook 21 loads its model once for all its settings and names the setting
in its progress lines; notebook 50's --limit limits both of its benchmarks."""
import json
import re
from pathlib import Path

import pytest

from mmbench_lib.cli import main

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def test_notebook_21_loads_the_model_once_and_names_each_setting(demo_dir, outputs, capsys):
    args = ["run", str(ROOT / "notebooks/21_mmmu_pro_settings.ipynb"), "-p", "data_dir", str(demo_dir),
            "-p", "settings", '["standard4", "standard10"]', "-p", "methods", '["direct"]', "-p", "fallback_seeds", "5",
            "--limit", "1", "--run-id", "settings"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert len(re.findall(r"^loaded model smollm2 in ", printed, re.M)) == 1  # the suite's own load line: one load
    assert "[setting standard4-direct (1 of 2)] mmmu-pro smollm2: 1/1 items" in printed
    assert "[setting standard10-direct (2 of 2)] mmmu-pro smollm2: 1/1 items" in printed


def test_notebook_50_limit_limits_both_benchmarks(demo_dir, outputs):
    args = ["run", str(ROOT / "notebooks/50_protocol_sensitivity.ipynb"), "-p", "data_dir", str(demo_dir),
            "-p", "ranking_benchmark", "seed", "-p", "protocols", '["content-sum", "content-mean"]', "-p", "generation_benchmark", "cmmmu",
            "-p", "seeds", "20", "--limit", "2", "--run-id", "limited"]
    assert main(args) == 0
    report = json.loads((outputs / "limited" / "protocol_report.json").read_text())
    assert report["seed"]["n_common"] == 2 and report["cmmmu"]["n_common"] == 2
