"""A real papermill run of notebooks/50_protocol_sensitivity.ipynb through `mmbench run` on the demo parameters
(SmolLM2, a few SEED v1 items under five protocols, part of the CMMMU demo split), and a rerun that reuses it."""
import json
from pathlib import Path

import pytest

from mmbench_lib.cli import main

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def test_protocol_sensitivity_notebook_on_the_demo_sets(demo_dir, outputs, capsys):
    args = ["run", str(ROOT / "notebooks/50_protocol_sensitivity.ipynb"),
            "-f", str(ROOT / "params/50_protocol_sensitivity/seed1_cmmmu_demo_smollm2.yaml"),
            "-p", "data_dir", str(demo_dir), "-p", "limit", "6", "-p", "generation_limit", "8", "-p", "seeds", "300",
            "--run-id", "proto"]
    assert main(args) == 0
    out = outputs / "proto"
    printed = capsys.readouterr().out
    headline = json.loads((out / "results.json").read_text())["report"]  # every protocol, in the run's own folder
    protocols = [(row[0], row[1]) for row in headline["rows"]]
    assert protocols[:5] == [("seed", p) for p in ("content, sum", "content, mean", "letters ranked",
                                                   "generated, lmms-eval", "generated, VLMEvalKit")]
    assert len(protocols) > 5 and {b for b, _ in protocols[5:]} == {"cmmmu"}
    assert headline["name"] in printed and "generated, VLMEvalKit" in printed and "no finished sub-run" not in printed
    for name in ("seed_accuracy", "seed_agreement", "seed_agreement_correct", "seed_tests", "seed_deltas", "seed_flips",
                 "cmmmu_accuracy", "cmmmu_fallback_seeds", "cmmmu_flips"):
        assert (out / "tables" / f"{name}.csv").is_file(), name
    for name in ("seed_protocol_summary", "seed_protocol_agreement", "seed_protocol_deltas", "cmmmu_fallback_seeds",
                 "cmmmu_parser_agreement", "cmmmu_parser_deltas"):
        assert (out / "figures" / f"{name}.png").is_file(), name
    report = json.loads((out / "protocol_report.json").read_text())
    seed, cmmmu = report["seed"], report["cmmmu"]
    assert seed["n_common"] == 6 and [a["key"] for a in seed["accuracy"]] == [
        "content-sum", "content-mean", "letters", "gen-lmms-eval", "gen-vlmevalkit"]
    assert all(a["n"] == 6 and 0 <= a["accuracy"] <= 1 for a in seed["accuracy"])
    assert len(seed["tests"]) == 10 and seed["agreement"]["content, sum"]["content, sum"] == 1.0
    man = json.loads((out / "seed__lmms-eval-gen" / "manifest.json").read_text())
    assert man["recipe"]["name"] == "lmms-eval-gen" and man["generation"]["max_new_tokens"] == 16
    fb = cmmmu["fallback_seeds"]
    assert fb["n"] == 8 and fb["seeds"] == 300 and fb["min"] <= fb["official_accuracy"] <= fb["max"]
    assert {s["run"] for s in seed["sources"]} == {f"proto/seed__{r}" for r in
                                                   ("seed1-ppl", "qwen-vl-letters", "lmms-eval-gen", "vlmevalkit-gen")}

    before = {p: p.read_bytes() for p in out.glob("*/predictions.jsonl")}
    assert main(args) == 0  # the same run id: every run is found finished and read again, nothing is scored twice
    assert {p: p.read_bytes() for p in out.glob("*/predictions.jsonl")} == before
    again = json.loads((out / "protocol_report.json").read_text())["seed"]
    assert again["accuracy"] == seed["accuracy"]
