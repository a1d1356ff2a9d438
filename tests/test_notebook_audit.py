"""Notebook 53 (reproduction audit) through `mmbench run`, on each benchmark's demo params: this suite's own run, the
same responses as an lmms-eval sample log and a VLMEvalKit file, and behind a misleading thinking trace. The checks
every benchmark shares are in :func:`_audit`; each test adds its benchmark's own."""
import json
from pathlib import Path

import pandas as pd
import pytest

from mmbench_lib.cli import main

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _audit(outputs, demo_dir, run_id: str, params: str, benchmark: str, reference: str = "official"):
    """Run the notebook on ``params`` and check what every benchmark's demo shows: the four inputs and their formats,
    the reference rule recovering behind the trace, the waterfall's steps, the figures. Returns (folder, tables)."""
    assert main(["run", str(ROOT / "notebooks" / "53_reproduction_audit.ipynb"), "--run-id", run_id,
                 "-f", str(ROOT / "params" / "53_reproduction_audit" / params), "-p", "data_dir", str(demo_dir)]) == 0
    out = outputs / run_id
    summary = json.loads((out / "audit" / "audit.json").read_text())
    assert summary["benchmark"] == benchmark
    assert [f["format"] for f in summary["files"]] == ["official-folders", "lmms-eval", "vlmevalkit", "plain-jsonl"]
    tables = {k: pd.read_csv(out / "tables" / f"rules_{k}.csv").set_index("rule set") for k in (1, 2, 3, 4)}
    own, think = tables[1], tables[4]
    assert own.index[0] == reference
    assert think.loc[f"{reference}, trace removed", "correct"] == own.loc[reference, "correct"]
    assert think.loc[reference, "correct"] <= own.loc[reference, "correct"]  # the trace names a wrong answer first
    steps = pd.read_csv(out / "tables" / "waterfall_4.csv")["step"].tolist()
    assert steps == ["reported", "file's own score", "thinking trace removed", "unexplained rest"]
    for name in ("audit_rules", "audit_waterfall_1", "audit_waterfall_4"):
        assert (out / "figures" / f"{name}.png").stat().st_size > 10_000
    return out, summary, tables


def _own_run(out, benchmark):
    manifest = json.loads((out / "own_run" / "manifest.json").read_text())
    assert manifest["benchmark"] == benchmark
    return manifest, json.loads((out / "own_run" / "metrics.json").read_text())


def test_the_mmmu_demo_audit_writes_tables_figures_and_the_waterfall(demo_dir, outputs):
    out, _summary, _tables = _audit(outputs, demo_dir, "audit", "mmmu_demo_random.yaml", "mmmu")
    manifest, metrics = _own_run(out, "mmmu")
    assert metrics["truncation_rate"] == 0 and metrics["steps"] == []
    assert manifest["data_revision"]["kind"].startswith("sha256")


def test_the_mmmu_pro_demo_audit(demo_dir, outputs):
    _audit(outputs, demo_dir, "audit_pro", "mmmu_pro_demo_random.yaml", "mmmu-pro")


def test_the_cmmmu_demo_audit(demo_dir, outputs):
    out, summary, tables = _audit(outputs, demo_dir, "audit_cmmmu", "cmmmu_demo_random.yaml", "cmmmu")
    assert Path(summary["files"][1]["path"]).name == "samples_cmmmu_val_demo.jsonl"
    own = tables[1]
    assert list(own.index) == ["official", "official, trace removed", "lmms-eval", "vlmevalkit"]
    assert own.loc["official", "n"] == 20  # the demo's validation split
    assert "file's own" in tables[2].index
    manifest, metrics = _own_run(out, "cmmmu")
    assert metrics["truncation_rate"] == 0 and metrics["steps"] == []
    assert manifest["data_revision"]["kind"].startswith("sha256")


def test_the_seed_demo_audit_has_the_papers_ranking_beside_the_letter_rules(demo_dir, outputs):
    """On SEED-Bench the reference rule set is the strict letter rule (not named "official"); the own ranking run
    adds the papers' protocol as its own column."""
    _out, _summary, tables = _audit(outputs, demo_dir, "audit_seed", "seed_demo_random.yaml", "seed",
                                    reference="letter exact match")
    own, lmms, think = tables[1], tables[2], tables[4]
    assert "official" not in own.index
    assert own.loc["paper ranking (this suite)", "correct"] == own.loc["letter exact match", "correct"]
    assert lmms.loc["file's own", "correct"] == own.loc["letter exact match", "correct"]
    assert think.loc["letter exact match", "correct"] == think.loc["lmms-eval", "correct"] == 0  # "<think>..." read
    assert "paper ranking (this suite)" not in think.index


def test_the_mmstar_demo_audit_notes_lmms_evals_axis_mean(demo_dir, outputs):
    """MMStar: this suite's run folder is read as SEED's are; every rule reads a ranked letter alike; the notes carry
    lmms-eval's axis mean beside the pooled score."""
    _out, summary, tables = _audit(outputs, demo_dir, "audit_mmstar", "mmstar_demo_random.yaml", "mmstar")
    own = tables[1]
    assert list(own.index) == ["official", "official, trace removed", "lmms-eval", "vlmevalkit"]
    assert own["correct"].nunique() == 1 and tables[2].loc["file's own", "correct"] == own.loc["official", "correct"]
    assert any("axes' accuracies" in n for n in summary["notes"])
