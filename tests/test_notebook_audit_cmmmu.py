"""Notebook 53 (reproduction audit) on CMMMU through `mmbench run`: the demo audits this suite's own CMMMU run
(Random Choice, validation), the same responses as an lmms-eval sample log and a VLMEvalKit file, and behind a
misleading thinking trace."""
import json
from pathlib import Path

import pandas as pd
import pytest

from mmbench_lib.cli import main

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def test_the_cmmmu_demo_audit_writes_tables_figures_and_the_waterfall(demo_dir, outputs):
    assert main(["run", str(ROOT / "notebooks" / "53_reproduction_audit.ipynb"), "--run-id", "audit_cmmmu",
                 "-f", str(ROOT / "params" / "53_reproduction_audit" / "cmmmu_demo_random.yaml"),
                 "-p", "data_dir", str(demo_dir)]) == 0
    out = outputs / "audit_cmmmu"
    summary = json.loads((out / "audit" / "audit.json").read_text())
    assert summary["benchmark"] == "cmmmu"
    assert [f["format"] for f in summary["files"]] == ["official-folders", "lmms-eval", "vlmevalkit", "plain-jsonl"]
    assert Path(summary["files"][1]["path"]).name == "samples_cmmmu_val_demo.jsonl"
    own = pd.read_csv(out / "tables" / "rules_1.csv").set_index("rule set")
    assert list(own.index) == ["official", "official, trace removed", "lmms-eval", "vlmevalkit"]
    assert own.loc["official", "n"] == 20  # the demo's validation split
    lmms = pd.read_csv(out / "tables" / "rules_2.csv").set_index("rule set")
    assert "file's own" in lmms.index
    think = pd.read_csv(out / "tables" / "rules_4.csv").set_index("rule set")
    assert think.loc["official, trace removed", "correct"] == own.loc["official", "correct"]
    assert think.loc["official", "correct"] <= own.loc["official", "correct"]  # the trace names a wrong answer first
    steps = pd.read_csv(out / "tables" / "waterfall_4.csv")["step"].tolist()
    assert steps == ["reported", "file's own score", "thinking trace removed", "unexplained rest"]
    for name in ("audit_rules", "audit_waterfall_1", "audit_waterfall_4"):
        assert (out / "figures" / f"{name}.png").stat().st_size > 10_000
    assert json.loads((out / "own_run" / "manifest.json").read_text())["benchmark"] == "cmmmu"
