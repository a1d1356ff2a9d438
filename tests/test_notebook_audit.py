"""Notebook 53 (reproduction audit) through `mmbench run`: the demo audits this suite's own MMMU run, the same
responses as an lmms-eval sample log and a VLMEvalKit file, and behind a misleading thinking trace."""
import json
from pathlib import Path

import pandas as pd
import pytest

from mmbench_lib.cli import main

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def test_the_demo_audit_writes_tables_figures_and_the_waterfall(demo_dir, outputs):
    assert main(["run", str(ROOT / "notebooks" / "53_reproduction_audit.ipynb"), "--run-id", "audit",
                 "-f", str(ROOT / "params" / "53_reproduction_audit" / "mmmu_demo_random.yaml"),
                 "-p", "data_dir", str(demo_dir)]) == 0
    out = outputs / "audit"
    summary = json.loads((out / "audit" / "audit.json").read_text())
    assert [f["format"] for f in summary["files"]] == ["official-folders", "lmms-eval", "vlmevalkit", "plain-jsonl"]
    own = pd.read_csv(out / "tables" / "rules_1.csv").set_index("rule set")
    think = pd.read_csv(out / "tables" / "rules_4.csv").set_index("rule set")
    assert think.loc["official, trace removed", "correct"] == own.loc["official", "correct"]
    assert think.loc["official", "correct"] <= own.loc["official", "correct"]  # the trace names a wrong option first
    steps = pd.read_csv(out / "tables" / "waterfall_4.csv")["step"].tolist()
    assert steps == ["reported", "file's own score", "thinking trace removed", "unexplained rest"]
    for name in ("audit_rules", "audit_waterfall_1", "audit_waterfall_4"):
        assert (out / "figures" / f"{name}.png").stat().st_size > 10_000
    metrics = json.loads((out / "own_run" / "metrics.json").read_text())
    assert metrics["truncation_rate"] == 0 and metrics["steps"] == []
    assert json.loads((out / "own_run" / "manifest.json").read_text())["data_revision"]["kind"].startswith("sha256")


def test_the_demo_audit_runs_on_seed(demo_dir, outputs):
    """The same notebook on SEED-Bench: the reference rule set is the strict letter rule (not named "official"),
    the own ranking run adds the papers' protocol as its own column."""
    assert main(["run", str(ROOT / "notebooks" / "53_reproduction_audit.ipynb"), "--run-id", "audit_seed",
                 "-f", str(ROOT / "params" / "53_reproduction_audit" / "seed_demo_random.yaml"),
                 "-p", "data_dir", str(demo_dir)]) == 0
    out = outputs / "audit_seed"
    summary = json.loads((out / "audit" / "audit.json").read_text())
    assert summary["benchmark"] == "seed"
    assert [f["format"] for f in summary["files"]] == ["official-folders", "lmms-eval", "vlmevalkit", "plain-jsonl"]
    own = pd.read_csv(out / "tables" / "rules_1.csv").set_index("rule set")
    assert own.index[0] == "letter exact match" and "official" not in own.index
    assert own.loc["paper ranking (this suite)", "correct"] == own.loc["letter exact match", "correct"]
    lmms = pd.read_csv(out / "tables" / "rules_2.csv").set_index("rule set")
    assert lmms.loc["file's own", "correct"] == own.loc["letter exact match", "correct"]
    think = pd.read_csv(out / "tables" / "rules_4.csv").set_index("rule set")
    assert think.loc["letter exact match, trace removed", "correct"] == own.loc["letter exact match", "correct"]
    assert think.loc["letter exact match", "correct"] == think.loc["lmms-eval", "correct"] == 0  # "<think>..." read
    assert "paper ranking (this suite)" not in think.index
    steps = pd.read_csv(out / "tables" / "waterfall_4.csv")["step"].tolist()
    assert steps == ["reported", "file's own score", "thinking trace removed", "unexplained rest"]
