"""The three report notebooks (50 protocol sensitivity, 51 blind-solvability, 52 CircularEval) on MMMU-Pro and
SEED-Bench-2-Plus through `mmbench run` on the demo sets, with the params files shipped for them (kept small with
limits): the reports hold no per-benchmark code, the tasks answer for themselves (parser variants, fallback draws,
option orders, options drawn in the screenshot)."""
import json
from pathlib import Path

import pytest

from mmbench_lib.cli import main

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _run(notebook, params, run_id, *overrides):
    args = ["run", str(ROOT / "notebooks" / notebook), "--run-id", run_id, "-f", str(ROOT / "params" / params)]
    for name, value in overrides:
        args += ["-p", name, value]
    return main(args)


def test_protocol_sensitivity_on_seed2plus_and_mmmu_pro(demo_dir, outputs):
    assert _run("50_protocol_sensitivity.ipynb", "50_protocol_sensitivity/seed2plus_mmmu_pro_demo_smollm2.yaml", "proto",
                ("data_dir", str(demo_dir)), ("limit", "3"), ("generation_limit", "3"), ("seeds", "100"),
                ("protocols", "[content-sum, letters]")) == 0
    out = outputs / "proto"
    report = json.loads((out / "protocol_report.json").read_text())
    plus, pro = report["seed2plus"], report["mmmu-pro"]
    assert plus["n_common"] == 3 and [a["key"] for a in plus["accuracy"]] == ["content-sum", "letters"]
    assert pro["n_common"] == 3 and [a["key"] for a in pro["accuracy"]] == ["official", "mmmu-parser", "no-fallback"]
    fb = pro["fallback_seeds"]
    assert fb["n"] == 3 and fb["seeds"] == 100 and fb["min"] <= fb["official_accuracy"] <= fb["max"]
    man = json.loads((out / "mmmu-pro__generation" / "manifest.json").read_text())
    assert man["benchmark"] == "mmmu-pro" and man["split"] == "standard10-direct"
    for name in ("mmmu-pro_fallback_seeds", "mmmu-pro_parser_deltas", "seed2plus_protocol_summary"):
        assert (out / "figures" / f"{name}.png").is_file(), name


def test_blind_solvability_on_mmmu_pro_and_seed2plus(demo_dir, outputs):
    for params, run_id, bench in (("51_blind_solvability/mmmu_pro_demo_smollm2.yaml", "blind_pro", "mmmu-pro"),
                                  ("51_blind_solvability/seed2plus_demo_smollm2.yaml", "blind_plus", "seed2plus")):
        assert _run("51_blind_solvability.ipynb", params, run_id, ("data_dir", str(demo_dir)), ("limit", "3")) == 0
        body = json.loads((outputs / run_id / "blind_audit.json").read_text())
        assert body["benchmark"] == bench and body["n_items"] == 3
        assert body["split"] == ("standard10-direct" if bench == "mmmu-pro" else None)
        assert (outputs / run_id / "figures" / "blind_solvability.png").is_file()


def test_circular_eval_over_ten_options_on_mmmu_pro(demo_dir, outputs):
    assert _run("52_circular_eval.ipynb", "52_circular_eval/mmmu_pro_demo_smollm2.yaml", "circ_pro",
                ("data_dir", str(demo_dir)), ("limit", "1")) == 0
    body = json.loads((outputs / "circ_pro" / "circular.json").read_text())
    assert body["benchmark"] == "mmmu-pro" and body["orders"] == [f"rot-{k}" for k in range(10)]
    assert body["overall"]["plain"]["n"] == 1 and body["overall"]["circular"]["correct"] <= body["overall"]["plain"]["correct"]
    gold = {x["letter"]: x["gold"] for x in body["letters"]}
    assert all(gold[letter] == 1 for letter in "ABCDEFGHIJ")  # the item's gold shown once at each of its 10 letters
    row = json.loads((outputs / "circ_pro" / "rot-3" / "official").glob("*.jsonl").__next__().read_text().splitlines()[0])
    shown = json.loads((outputs / "circ_pro" / "rot-3" / "scored.jsonl").read_text().splitlines()[0])
    assert row["answer"] == shown["answer"] and shown["option_order"][:2] == [3, 4]


def test_circular_eval_on_seed2plus_letters_and_refused_on_the_vision_setting(demo_dir, outputs, capsys):
    assert _run("52_circular_eval.ipynb", "52_circular_eval/seed2plus_demo_smollm2_letters.yaml", "circ_plus",
                ("data_dir", str(demo_dir)), ("limit", "2")) == 0
    body = json.loads((outputs / "circ_plus" / "circular.json").read_text())
    assert body["benchmark"] == "seed2plus" and body["orders"] == ["rot-0", "rot-1", "rot-2", "rot-3"]
    assert _run("52_circular_eval.ipynb", "52_circular_eval/mmmu_pro_demo_smollm2.yaml", "circ_vis",
                ("data_dir", str(demo_dir)), ("data", "{split: vision-direct}")) != 0
    assert "no lettered multiple-choice item" in capsys.readouterr().err


def test_circular_eval_then_protocol_sensitivity_never_reuses_a_rotation(demo_dir, outputs):
    """The docs' order, 52 then 50 on one benchmark (issue 35): 50's 'letters ranked' protocol is made in its own
    folder (a rot-k run is another identity), named in its table, and agrees with 52's original order."""
    assert _run("52_circular_eval.ipynb", "52_circular_eval/seed2plus_demo_smollm2_letters.yaml", "circ",
                ("data_dir", str(demo_dir)), ("limit", "3")) == 0
    assert _run("50_protocol_sensitivity.ipynb", "50_protocol_sensitivity/seed2plus_mmmu_pro_demo_smollm2.yaml", "proto",
                ("data_dir", str(demo_dir)), ("limit", "3"), ("generation_benchmark", '""'),
                ("protocols", "[letters]")) == 0
    plus = json.loads((outputs / "proto" / "protocol_report.json").read_text())["seed2plus"]
    (source,) = plus["sources"]
    assert source["run"] == "proto/seed2plus__qwen-vl-letters" and source["reused"] is False
    headline = json.loads((outputs / "proto" / "results.json").read_text())["report"]
    assert headline["columns"][-1] == "run" and headline["rows"][0][-1] == "proto/seed2plus__qwen-vl-letters"
    plain = {json.loads(x)["id"]: json.loads(x)["prediction"]
             for x in (outputs / "circ" / "rot-0" / "predictions.jsonl").read_text().splitlines()}
    ours = {json.loads(x)["id"]: json.loads(x)["prediction"]
            for x in (outputs / "proto" / "seed2plus__qwen-vl-letters" / "predictions.jsonl").read_text().splitlines()}
    assert ours == {k: plain[k] for k in ours}  # the original order: the same letters as 52's rot-0
